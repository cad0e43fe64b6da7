import torch

from models.positional import (
    interleaved_to_half,
    rope_rotate,
    sinusoidal_rotation,
    sinusoidal_table,
)


def test_sinusoidal_table_starts_with_sin0_cos0():
    pe = sinusoidal_table(10, 8)
    assert pe.shape == (10, 8)
    assert torch.equal(pe[0], torch.tensor([0.0, 1.0] * 4))
    assert pe.abs().max() <= 1.0


def test_shift_is_a_rotation_of_the_encoding():
    pe = sinusoidal_table(64, 16, dtype=torch.float64)
    for k in (1, 3, 10):
        r = sinusoidal_rotation(k, 16, dtype=torch.float64)
        assert torch.allclose(pe[k:], pe[:-k] @ r.T, atol=1e-5)  # PE(p+k) = R(k) PE(p)
        assert torch.allclose(r @ r.T, torch.eye(16, dtype=torch.float64), atol=1e-12)


def test_dot_products_of_encodings_depend_only_on_offset():
    pe = sinusoidal_table(50, 32, dtype=torch.float64)
    gram = pe @ pe.T  # [50, 50]
    for k in (0, 1, 5, 20):
        diag = gram.diagonal(k)
        assert torch.allclose(diag, diag[0].expand_as(diag), atol=1e-5)
    assert torch.allclose(gram, gram.T)


def test_rope_scores_depend_only_on_relative_position():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 16, generator=g, dtype=torch.float64)

    def score(m: int, n: int) -> float:
        qm = rope_rotate(q[None], torch.tensor([m]))[0]
        kn = rope_rotate(k[None], torch.tensor([n]))[0]
        return float(qm @ kn)

    for m, n in ((5, 2), (2, 5), (7, 7)):
        for shift in (1, 13, 100):
            assert abs(score(m, n) - score(m + shift, n + shift)) < 1e-5
    assert abs(score(5, 2) - score(2, 5)) > 1e-3  # direction matters, not only distance


def test_rope_keeps_norms_and_position_zero_is_identity():
    x = torch.randn(3, 6, 8, dtype=torch.float64)
    pos = torch.arange(6)
    assert torch.allclose(rope_rotate(x, pos).norm(dim=-1), x.norm(dim=-1))
    assert torch.allclose(rope_rotate(x, torch.zeros(6))[..., 0, :], x[..., 0, :])


def test_rotate_half_and_interleaved_layouts_agree_after_permutation():
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    pos = torch.arange(5)
    perm = interleaved_to_half(8)
    assert perm.tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    half = rope_rotate(x[..., perm], pos, layout="half")
    inter = rope_rotate(x, pos, layout="interleaved")
    assert torch.allclose(half, inter[..., perm], atol=1e-12)
    # mixing them (weights laid out for one, rotation of the other) is a different function
    assert not torch.allclose(rope_rotate(x, pos, layout="half"), inter, atol=1e-3)
