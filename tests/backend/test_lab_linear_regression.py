"""The `linear-regression` lab's contract with subclasses (its class docstring): another
table through `table()`, surface axes through `surface_axes()`, figures through
`more_scalars` and `more_picture`, unseen rows through `inputs`.
backend/labs/live_stream.py relies on exactly this."""

from __future__ import annotations

import torch

from backend.labs.linear_regression import LinearRegressionLab, Params

# Three rows, two columns, far from zero mean: z-scoring must visibly change them.
X = torch.tensor([[10.0, 200.0], [12.0, 260.0], [15.0, 210.0]])
Y = torch.tensor([1.0, 2.0, 3.0])


class TableLab(LinearRegressionLab):
    """A subclass that uses nothing but the stated contract."""

    seen: list[bool]

    def table(self):
        return X, Y, ["a", "c"]

    def surface_axes(self) -> tuple[int, int]:
        return 1, 2

    def more_scalars(self, scalars: dict[str, float]) -> dict[str, float]:
        if not hasattr(self, "seen"):
            self.seen = []
        self.seen.append(False)
        return {"first_pred": float(self.model(self.x[:1]).detach()[0])}

    def more_picture(self):
        self.seen[-1] = True
        return [], {"labels": self.param_labels()}


def make(**params) -> TableLab:
    return TableLab(Params(**params), 0, torch.device("cpu"))


def test_a_subclass_trains_on_its_own_table_with_its_own_axes():
    lab = make(features="zscore")
    assert torch.equal(lab.x_raw, X) and lab.names == ["a", "c"]
    assert torch.allclose(lab.x.mean(0), torch.zeros(2), atol=1e-6)  # z-scored, as trained on
    # unseen rows go through the same scale (bitwise: the same ops on the same table)
    assert torch.equal(lab.inputs(X), lab.x)
    f = lab.snapshot()
    assert f.meta["surface"]["x"] == "w_c" and f.meta["surface"]["y"] == "b"
    assert f.meta["names"] == ["w_a", "w_c", "b"] == lab.param_labels()
    assert f.meta["optimum"] == [float(v) for v in lab.optimum()]
    assert len(lab.optimum()) == 3


def test_raw_features_leave_inputs_as_they_are():
    lab = make(features="raw")
    assert torch.equal(lab.inputs(X), X) and torch.equal(lab.x, X)


def test_more_scalars_run_on_every_frame_and_more_picture_on_sent_ones():
    lab = make(features="zscore")
    out = {}
    for capture in (False, True):
        f = out[capture] = lab.step(capture)
        assert f.scalars["first_pred"] == float(lab.model(lab.x[:1]).detach()[0])  # after the step
        assert {"loss", "w_a", "grad_b"} <= set(f.scalars)  # the base lab's figures first
    assert lab.seen == [False, True]
    assert "labels" not in out[False].meta and out[True].meta["labels"] == ["w_a", "w_c", "b"]


def test_the_axes_fall_back_to_the_params_and_stay_distinct():
    lab = LinearRegressionLab(Params(axis_x=0, axis_y=0), 0, torch.device("cpu"))
    assert (lab.ax, lab.ay) == (0, 1)  # one-feature data: w_x and b
    assert make().ax == 1 and make().ay == 2
