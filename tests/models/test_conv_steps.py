"""The convolution worked examples reproduce CURRICULUM.md ch. 4's numbers, all from torch."""

import pytest
import torch

from models import conv_steps as s


def test_edge_kernel_finds_the_vertical_edge_as_cross_correlation():
    out = s.correlate(s.EDGE_IMAGE, s.EDGE_KERNEL)
    assert out.tolist() == [[0.0, 1.0, 0.0, 0.0]] * 4
    # The textbook convolution flips the kernel: the edge comes out negative.
    assert s.convolve(s.EDGE_IMAGE, s.EDGE_KERNEL).tolist() == [[0.0, -1.0, 0.0, 0.0]] * 4


def test_pooling_numbers():
    avg = s.pool(s.AVG_INPUT)
    assert avg.input.tolist()[0] == [1.0, 2.0, 3.0, 4.0]
    assert avg.avg.tolist() == [[3.5, 5.5], [11.5, 13.5]]
    mx = s.pool(s.MAX_INPUT)
    assert mx.max.tolist() == [[7.0, 6.0], [8.0, 9.0]]
    assert mx.argmax.tolist() == [[0, 3], [12, 15]]  # the corners won each window


@pytest.mark.parametrize(
    ("n", "k", "p", "s_", "side"),
    [(5, 3, 0, 1, 3), (5, 3, 1, 1, 5), (7, 3, 1, 2, 4), (8, 2, 0, 2, 4)],
)
def test_output_size_formula_matches_torch(n, k, p, s_, side):
    o = s.output_size(n, k, p, s_)
    assert o.formula == o.torch_side == side
    assert o.starts == [i * s_ for i in range(side)]
    assert o.starts[-1] + k <= n + 2 * p  # the last window fits in the padded input


def test_output_size_too_big_kernel_is_torchs_refusal():
    o = s.output_size(2, 5, 0, 1)
    assert o.torch_side is None and o.formula <= 0 and "Kernel size" in o.error


def test_two_3x3_see_5x5_with_18_weights():
    r = s.receptive_field()
    assert r.side_seen == 5
    assert (r.weights_two_3x3, r.weights_one_5x5) == (18, 25)
    nz = r.field > 0
    assert int(nz.sum()) == 25 and int((r.field_5x5 > 0).sum()) == 25
    assert r.field[4, 2:7].tolist() == [3.0, 6.0, 9.0, 6.0, 3.0]  # paths: 1 2 3 2 1 outer


def test_one_by_one_conv_is_a_per_pixel_linear_layer():
    o = s.one_by_one()
    assert o.conv_out.shape == o.linear_out.shape == (2, 4, 4)
    assert o.max_abs_diff < 1e-5
    assert o.conv_params == o.linear_params == 3 * 2 + 2
    assert not torch.equal(o.conv_out, torch.zeros_like(o.conv_out))


def test_presets_and_stride_padding():
    img = torch.zeros(6, 6)
    img[:, 3:] = 1.0
    edge = s.correlate(img, s.PRESETS["edge"], padding=1)
    assert edge.shape == (6, 6) and edge[2].tolist()[2:4] == [4.0, 4.0]  # Sobel at the edge
    blur = s.correlate(torch.ones(5, 5), s.PRESETS["blur"])
    assert torch.allclose(blur, torch.ones(3, 3))
    assert s.correlate(torch.ones(7, 7), s.PRESETS["sharpen"], stride=2).shape == (3, 3)
