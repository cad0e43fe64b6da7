"""Every sentence a page states (not computes) about what a model learned or shows at init
holds on the page's own recipe, for seeds 0–2 with 1 and 2 torch threads (tests/trained.py).

Sentences that depend on the run are read off it by the views instead (norms' story, memory's
example, sparse-attention's distances past the window, regularization's spread), and the
try-next texts whose answer the run decides are asked as questions; what is left stated is
checked here. Each test names the sentences it backs. One lab build a run, shared by the
claims of that lab.
"""

from __future__ import annotations

import pytest
import torch

from backend.labs.depth import DepthLab
from backend.labs.depth import Params as DepthParams
from backend.labs.experiments import experiments_for
from backend.labs.norms import NormsLab
from backend.labs.norms import Params as NormsParams
from tests.trained import across_runs

pytestmark = pytest.mark.slow
CPU = torch.device("cpu")


def _try(lab: str, key: str) -> dict:
    return next(x["params"] for x in experiments_for(lab) if x["key"] == key)


def _norms_init(seed: int) -> dict[str, list[float]]:
    """The gradient norm per stage at init, per placement (the waterfall's first column)."""
    lab = NormsLab(NormsParams(**_try("norms", "cold")), seed, CPU)
    stages = [s for s, _ in lab.arm_list[0].stages]
    assert stages[1:-1] == [f"blocks.{i}" for i in range(lab.params.n_layers)]
    return {k: lab.init_grad[i] for i, k in enumerate(lab.cfgs)}


def test_norms_at_init_post_norms_blocks_above_the_first_get_a_small_fraction_of_pre_norms():
    """norms.story_init: "The waterfall's first column is the gradient at init: post-norm's
    blocks above the first get a small fraction of pre-norm's." and the try-next "cold":
    "post-norm's gradient norms at init are uneven across layers." (the page's default recipe
    is the "cold" scenario: compare placements, no warm-up)."""
    runs = across_runs(_norms_init)
    for run, g in runs.items():
        pre, post = g["pre"][1:-1], g["post"][1:-1]  # blocks 0 … L-1
        above = [b / a for a, b in zip(pre[1:], post[1:], strict=True)]
        assert max(above) < 0.2, (run, above)  # measured 0.04–0.05 on every run
        assert post[0] > 5 * max(post[1:]), (run, post)  # uneven: block 0 takes most


def _depth_first_step(params: dict):
    def run(seed: int) -> dict[str, list[float]]:
        lab = DepthLab(DepthParams(**params), seed, CPU)
        lab.step(False)
        return {a.spec.label if hasattr(a, "spec") else str(i): list(a.grad_norms)
                for i, a in enumerate(lab.arm_list)}  # fmt: skip

    return run


def test_depth_thirty_sigmoid_layers_at_n_0_001_lose_orders_of_magnitude_towards_the_input():
    """depth try-next "vanish": "the waterfall: gradient norms fall by orders of magnitude
    towards the first layer." and the description's "At depth 30 with sigmoid and N(0, 0.01)
    the early layers' gradients are orders of magnitude smaller" — of the plain stack (stages
    run output first, so the input layer is last)."""
    runs = across_runs(_depth_first_step(_try("depth", "vanish")))
    for run, arms in runs.items():
        plain = next(iter(arms.values()))  # the plain stack is the first arm
        last_hidden, first = plain[1], plain[-1]
        assert last_hidden > 0 and first < 1e-3 * last_hidden, (run, plain)


def test_depth_a_constant_init_keeps_every_row_of_a_layer_identical():
    """depth try-next "const": "the symmetry heatmap: every row of a layer stays identical
    forever." (no noise: identical rows get identical gradients, so they stay identical; the
    float sums are the same sums, but the tolerance allows a kernel's reordering)."""

    def run(seed: int) -> list[float]:
        lab = DepthLab(DepthParams(**_try("depth", "const")), seed, CPU)
        for _ in range(10):
            lab.step(False)
        spread = []
        for label, arm in zip(lab.cfgs, lab.arm_list, strict=True):
            if label == "reference":  # the reference arm keeps its own (Kaiming) init
                continue
            for lin in arm.model.linears()[1:-1]:  # hidden-to-hidden layers: rows of one layer
                w = lin.weight.detach()
                spread.append(float((w - w[:1]).abs().max()))
        return spread

    for run_id, spread in across_runs(run).items():
        assert spread and max(spread) < 1e-5, (run_id, spread)


def test_gpt_lesson_reversal_is_solved_with_an_anti_diagonal_head():
    """lessons/attention-forming: the poll's answer "An anti-diagonal (the answer reads the
    prompt backwards)" and "Run until solved … (95% of held-out strings exactly right)", on
    the lesson's recipe (the gpt lab, reverse of 6): solved within 200 steps, and when it is,
    some head's answer rows put most of their weight on the mirrored prompt symbol (query q
    reads 2n + 1 − q). Which layer carries it is left to the run (the lesson says so)."""
    from backend.labs._gpt_params import Params as GPTParams
    from backend.labs.gpt import GPTLab

    def run(seed: int) -> tuple[int | None, float]:
        lab = GPTLab(GPTParams(data="reverse", seq_len=6), seed, CPU)
        while lab.solved_at is None and lab.t < 200:
            lab.step(False)
        frame = lab.step(True)
        q = torch.arange(7, 13)
        pats = [t.data for t in frame.tensors if t.name.endswith("attn.hook_pattern")]
        best = max(float(p[:, q, 13 - q].mean(-1).max()) for p in pats)
        return lab.solved_at, best

    for run_id, (solved, best) in across_runs(run).items():
        assert solved is not None and best > 0.5, (run_id, solved, best)
