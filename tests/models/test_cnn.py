"""The CNN family: exact parameter counts, hook points named from the module tree, the
MLP of about its size, gradient stages, and augmentation that really shifts and rotates."""

import torch

from models import cnn
from models.hooks import capture
from models.stages import grad_stages


def test_param_count_exact_and_mlp_of_similar_size():
    for ch in [(8, 16), (4,), (16, 32, 8)]:
        for stem in ("3x3", "7x7s2") if len(ch) < 3 else ("3x3",):
            cfg = cnn.CNNConfig(channels=ch, stem=stem)
            assert cfg.param_count() == sum(p.numel() for p in cnn.CNN(cfg).parameters())
    cfg = cnn.CNNConfig()
    assert cfg.param_count() == 80 + 1168 + 650 == 1898
    m = cnn.mlp_like(cfg)
    assert m.hidden == (25,)
    assert cnn.mlp_param_count(m) == sum(p.numel() for p in cnn.build_mlp(m).parameters()) == 1885


def test_hooks_and_shapes():
    model = cnn.CNN()
    x = torch.rand(3, 8, 8)
    with capture(model, "convs.*.hook_post") as store:
        logits = model(x)
    assert logits.shape == (3, 10)
    assert store["convs.0.hook_post"].shape == (3, 8, 8, 8)
    assert store["convs.1.hook_post"].shape == (3, 16, 4, 4)
    assert (store["convs.0.hook_post"] >= 0).all()  # after the ReLU
    assert model.kernels(1).shape == (16, 8, 3, 3)


def test_imagenet_stem_halves_the_digit_before_anything_is_learned():
    cfg = cnn.CNNConfig(stem="7x7s2")
    assert cfg.sides == (4, 2) and cfg.flat == 16
    assert cfg.param_count() == (8 * 49 + 8) + 1168 + 170 == 1738
    model = cnn.CNN(cfg)
    with capture(model, "convs.*.hook_post") as store:
        assert model(torch.rand(2, 8, 8)).shape == (2, 10)
    assert store["convs.0.hook_post"].shape == (2, 8, 4, 4)
    assert store["convs.1.hook_post"].shape == (2, 16, 2, 2)


def test_grad_stages():
    assert [name for name, _ in grad_stages(cnn.CNN())] == ["convs.0", "convs.1", "out"]


def test_augment_shifts_whole_pixels_and_rotates():
    x = torch.zeros(64, 8, 8)
    x[:, 3:5, 3:5] = 1.0
    g = torch.Generator().manual_seed(0)
    shifted = cnn.augment(x, g, shift=1, degrees=0.0)
    # No rotation: each image is the square moved by whole pixels, mass kept.
    assert torch.allclose(shifted.sum(dim=(1, 2)), torch.full((64,), 4.0), atol=1e-4)
    rows = (shifted.sum(dim=2) > 0.5).float().argmax(dim=1)
    assert set(rows.tolist()) == {2, 3, 4}
    rot = cnn.augment(x, torch.Generator().manual_seed(1), shift=0, degrees=15.0)
    assert not torch.allclose(rot, x)  # rotated: bilinear spreads the square
    again = cnn.augment(x, torch.Generator().manual_seed(1), shift=0, degrees=15.0)
    assert torch.equal(rot, again)  # the generator decides everything
