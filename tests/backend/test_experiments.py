"""'Try this next' (backend/labs/experiments/): every lab has 2-3 real experiments whose
params its schema takes, and the catalog serves them with the lab's info."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from backend.admission import validate_params
from backend.app import create_app
from backend.config import Settings
from backend.labs import REGISTRY, load_all
from backend.labs.experiments import EXPERIMENTS

load_all()


def test_every_lab_has_two_or_three_and_no_stray_ids():
    missing = {
        lab: len(EXPERIMENTS.get(lab, []))
        for lab in REGISTRY
        if not 2 <= len(EXPERIMENTS.get(lab, [])) <= 3
    }
    assert not missing, missing
    assert set(EXPERIMENTS) <= set(REGISTRY), set(EXPERIMENTS) - set(REGISTRY)


@pytest.mark.parametrize("lab", sorted(EXPERIMENTS))
def test_params_pass_the_labs_schema(lab):
    cls = REGISTRY[lab]
    defaults = cls.Params().model_dump()
    keys = [x["key"] for x in EXPERIMENTS[lab]]
    assert len(set(keys)) == len(keys)
    for x in EXPERIMENTS[lab]:
        assert x["params"], x["key"]
        assert set(x["params"]) <= set(cls.Params.model_fields), (
            x["key"],
            set(x["params"]) - set(cls.Params.model_fields),
        )
        # As the server does for a `set`: the partial dict over the current params, validated
        # and sized (a too-large model would be refused with the same path).
        params = validate_params(cls, {**defaults, **x["params"]}, Settings())
        for k, v in x["params"].items():
            assert getattr(params, k) == pytest.approx(v) if isinstance(v, float) else True
        for side in ("label", "watch"):
            assert set(x[side]) == {"en", "zh"}, (x["key"], side)
            assert x[side]["en"].strip() and x[side]["zh"].strip()
        # Real Chinese for learners: the watch sentence is written in it (a label may be a formula).
        assert any("\u4e00" <= ch <= "\u9fff" for ch in x["watch"]["zh"]), x["key"]


def test_catalog_serves_them():
    with TestClient(create_app()) as client:
        one = client.get("/api/labs/apple").json()
        assert [x["key"] for x in one["experiments"]] == [x["key"] for x in EXPERIMENTS["apple"]]
        assert one["experiments"][0]["watch"]["zh"]
        every = client.get("/api/labs").json()
        assert all(2 <= len(lab["experiments"]) <= 3 for lab in every)
