"""The stage-by-stage attention reproduces the curriculum's worked examples."""

import math

import pytest
import torch
import torch.nn.functional as F

from models import attention_steps as st


def preset(name: str, **kw) -> st.Stages:
    return st.run(*st.preset_tensors(name), **kw)


def test_scores_2_0_minus1_give_the_books_weights_and_output():
    s = preset("scores")
    assert s.scaled[0].tolist() == [2.0, 0.0, -1.0]  # raw [4, 0, −2] ÷ √4
    assert s.scores[0].tolist() == [4.0, 0.0, -2.0]
    assert [round(v, 3) for v in s.weights[0].tolist()] == [0.844, 0.114, 0.042]
    assert s.v.tolist() == [[1.0, 0.0], [0.0, 2.0], [2.0, 1.0]]  # v0, v1, v2
    assert [round(v, 3) for v in s.out[0].tolist()] == [0.928, 0.270]


def test_causal_example_rows():
    s = preset("causal")
    assert torch.allclose(s.scaled, torch.tensor(st.CAUSAL_S))  # raw 2S ÷ √4 = S
    book = [
        [1, 0, 0, 0],
        [0.4256, 0.5744, 0, 0],
        [0.2219, 0.3311, 0.4470, 0],
        [0.1807, 0.2207, 0.2695, 0.3291],
    ]
    # The book rounds so each row sums to 1: 0.44695 → 0.4470 and 0.32918 → 0.3291, so the
    # exact values agree with its digits to one unit in the fourth decimal.
    assert torch.allclose(s.weights, torch.tensor(book), atol=1.01e-4)
    assert [round(v, 4) for v in s.weights[1].tolist()] == [0.4256, 0.5744, 0.0, 0.0]
    assert [round(v, 4) for v in s.weights[2, :2].tolist()] == [0.2219, 0.3311]
    assert [round(v, 4) for v in s.weights[3, :3].tolist()] == [0.1807, 0.2207, 0.2695]
    assert torch.isneginf(s.masked).tolist() == [[j > i for j in range(4)] for i in range(4)]
    assert torch.allclose(s.weights.sum(-1), torch.ones(4))


def test_context_example_adds_the_neighbour():
    s = preset("context")
    assert st.PRESETS["context"].tokens == ("甜", "苹果", "苹果", "手机")
    assert s.residual is not None
    assert torch.allclose(s.x[1], s.x[2])  # the same 苹果 vector in both phrases
    assert [round(v, 6) for v in s.residual[1].tolist()] == [0.9, 0.1]  # 苹果 + 甜
    assert [round(v, 6) for v in s.residual[2].tolist()] == [0.1, 0.9]  # 苹果 + 手机
    assert s.weights[1].tolist() == [1.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("name", sorted(st.PRESETS))
def test_stages_match_the_fused_kernel(name):
    s = preset(name)
    assert s.extras["sdpa_error"] < 1e-6
    ref = F.scaled_dot_product_attention(s.q[None], s.k[None], s.v[None], attn_mask=s.allowed)[0]
    assert torch.allclose(ref, s.out, atol=1e-6)


def test_tying_wk_to_wq_makes_scores_symmetric():
    x, w_q, w_k, w_v, allowed = st.preset_tensors("scores")
    free = st.run(x, w_q, w_k, w_v, allowed)
    tied = st.run(x, w_q, w_k, w_v, allowed, tie_qk=True)
    assert free.extras["symmetry_error"] > 0.5
    # symmetric to float rounding (q @ q.T: a kernel may sum entry (i, j) and (j, i) in
    # different orders); the page calls it tied below 1e-6
    assert tied.extras["symmetry_error"] < 1e-6
    torch.testing.assert_close(tied.scores, tied.scores.T, rtol=0, atol=1e-6)


def test_scaling_keeps_score_variance_near_one_and_entropy_alive():
    sweep = st.probe_sweep(seed=0)
    assert [p.d for p in sweep] == [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    for p in sweep:
        assert 0.75 * p.d < p.var_raw < 1.25 * p.d  # raw variance ≈ d
        assert 0.8 < p.var_scaled < 1.2  # scaled ≈ 1
        assert p.entropy_scaled > 2.0  # of ln 16 ≈ 2.77
    assert sweep[-1].entropy_raw < 0.2  # unscaled, softmax is nearly one-hot at d = 1024
    assert math.isclose(sweep[0].entropy_max, math.log(16))


def test_multi_head_shape_chain_and_which_steps_copy():
    chain = st.head_chain(2, 5, 8, 4)
    shapes = [c.shape for c in chain.steps]
    assert shapes == [
        (2, 5, 8),
        (2, 5, 4, 2),  # view
        (2, 4, 5, 2),  # transpose
        (2, 4, 5, 5),  # scores
        (2, 4, 5, 2),  # × V
        (2, 5, 4, 2),  # transpose back
        (2, 5, 4, 2),  # contiguous
        (2, 5, 8),  # view
    ]
    same = [c.same_memory for c in chain.steps]
    assert same == [None, True, True, None, None, True, False, True]  # only .contiguous() copies
    contiguous = [c.contiguous for c in chain.steps]
    assert contiguous == [True, True, False, True, True, False, True, True]
    assert "view size is not compatible" in chain.view_error
    assert chain.sdpa_error < 1e-6
    with pytest.raises(ValueError):
        st.head_chain(2, 5, 8, 3)
