"""The digits data, the 32×32 → 8×8 reduction, the losses and the curriculum's numbers."""

from __future__ import annotations

import torch
from torch.nn import functional as F

from models import digits
from models.data import digits as data


def block_bitmap(images: torch.Tensor) -> torch.Tensor:
    """[N, 8, 8] counts -> [N, 32, 32] bitmaps whose 4×4 blocks hold exactly that many on pixels."""
    ranks = torch.arange(16).reshape(4, 4)  # the k-th pixel of a block is on when k < count
    on = ranks[None, None, None] < images[..., None, None]  # [N, 8, 8, 4, 4]
    return on.permute(0, 1, 3, 2, 4).reshape(-1, 32, 32)  # [N, 32, 32]


def train(cfg: digits.DigitsConfig, steps: int, lr: float = 0.1, seed: int = 0) -> float:
    """Full-batch SGD as the lab runs it by default; returns test accuracy after `steps`."""
    images, labels = data.load()
    train_idx, test_idx = data.stratified_split(labels, 0.2, seed)
    x, y = digits.prepare(images[train_idx], cfg), labels[train_idx]
    torch.manual_seed(seed)
    model = digits.build(cfg)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = digits.loss_fn(model(x), y, cfg.loss)
        opt.zero_grad()
        loss.backward()
        opt.step()
    x_test = digits.prepare(images[test_idx], cfg)
    return digits.evaluate(model, x_test, labels[test_idx], cfg.loss)[1]


def test_bundled_digits_are_1797_images_of_counts_0_to_16():
    images, labels = data.load()
    assert images.shape == (1797, 8, 8) and labels.shape == (1797,)
    assert torch.equal(images, images.round()) and images.min() == 0 and images.max() == 16
    assert sorted(labels.unique().tolist()) == list(range(10))


def test_read_without_scikit_learn_it_is_exactly_what_load_digits_gives():
    from sklearn.datasets import load_digits

    images, labels = data.load()
    d = load_digits()
    assert torch.equal(images, torch.from_numpy(d.images).float())
    assert torch.equal(labels, torch.from_numpy(d.target).long())


def test_split_is_stratified_disjoint_and_seeded():
    _, labels = data.load()
    train_idx, test_idx = data.stratified_split(labels, 0.2, seed=3)
    assert len(train_idx) + len(test_idx) == 1797
    assert set(train_idx.tolist()).isdisjoint(test_idx.tolist())
    assert len(set(train_idx.tolist()) | set(test_idx.tolist())) == 1797
    whole = torch.bincount(labels, minlength=10).float()
    test_counts = torch.bincount(labels[test_idx], minlength=10).float()
    assert torch.all((test_counts - 0.2 * whole).abs() <= 0.5)  # each class split 80/20
    again, _ = data.stratified_split(labels, 0.2, seed=3)
    other, _ = data.stratified_split(labels, 0.2, seed=4)
    assert torch.equal(train_idx, again) and not torch.equal(train_idx, other)


def test_block_counting_reproduces_every_image_of_the_data_set():
    images, _ = data.load()
    bitmaps = block_bitmap(images)
    counted = torch.stack([data.bitmap_to_digits(b) for b in bitmaps])
    assert torch.equal(counted, images)
    assert torch.equal(data.bitmap_to_digits(torch.ones(32, 32)), torch.full((8, 8), 16.0))


def test_drawing_is_binarized_at_one_half_then_counted():
    grey = torch.zeros(32, 32)
    grey[:4, :4] = 0.5  # counts as ink
    grey[:4, 4:8] = 0.49  # does not
    bitmap, counts = data.from_drawing(grey, fit=False)
    assert bitmap.dtype == torch.bool and counts[0, 0] == 16 and counts[0, 1] == 0
    assert counts.sum() == 16


def test_fit_scales_a_small_corner_digit_to_full_height_and_centres_it():
    bitmap = torch.zeros(32, 32, dtype=torch.bool)
    bitmap[1:9, 2:4] = True  # a "1": 8 tall, 2 wide, top left
    fitted = data.fit_bitmap(bitmap)
    rows = torch.nonzero(fitted.any(dim=1)).flatten()
    cols = torch.nonzero(fitted.any(dim=0)).flatten()
    assert (rows[0], rows[-1]) == (0, 31)  # fills the height
    assert abs((cols[0] + cols[-1]) / 2 - 15.5) <= 0.5  # centred
    assert cols[-1] - cols[0] + 1 == 8  # aspect kept: 2 × (32 / 8)
    wide = torch.zeros(32, 32, dtype=torch.bool)
    wide[10:12, :] = True  # a dash as wide as the pad is limited by the width
    fitted = data.fit_bitmap(wide)
    cols = torch.nonzero(fitted.any(dim=0)).flatten()
    assert cols[-1] - cols[0] + 1 == data.FIT_WIDTH
    assert not data.fit_bitmap(torch.zeros(32, 32, dtype=torch.bool)).any()


def test_the_books_network_has_535818_parameters_not_535404():
    total, weights = digits.param_count(digits.book_model())
    assert (total, weights) == (535_818, 535_040)
    assert 535_404 not in (total, weights)
    assert digits.param_count(digits.build(digits.DigitsConfig())) == (17_226, 17_024)


def test_hand_softmax_nll_equals_cross_entropy_until_exp_overflows():
    torch.manual_seed(0)
    logits = torch.randn(32, 10, requires_grad=True)
    y = torch.randint(0, 10, (32,))
    hand = digits.hand_softmax_nll(logits, y)
    (g_hand,) = torch.autograd.grad(hand, logits)
    ce = F.cross_entropy(logits, y)
    (g_ce,) = torch.autograd.grad(ce, logits)
    assert torch.allclose(hand, ce, atol=1e-6) and torch.allclose(g_hand, g_ce, atol=1e-7)
    assert torch.allclose(digits.hand_softmax(logits), torch.softmax(logits, -1), atol=1e-7)
    # float32 exp overflows above ≈ 88.7: the hand version is nan, log-softmax is fine.
    big = torch.tensor([[89.0, 0.0, 0.0]])
    assert not torch.isfinite(digits.hand_softmax_nll(big, torch.tensor([0])))
    assert F.cross_entropy(big, torch.tensor([0])) < 1e-6
    # A probability that underflows to 0 makes −log infinite.
    far = torch.tensor([[0.0, -120.0]])
    assert digits.hand_softmax_nll(far, torch.tensor([1])) == float("inf")
    assert torch.isclose(F.cross_entropy(far, torch.tensor([1])), torch.tensor(120.0))


def test_confusion_counts_true_rows_and_predicted_columns():
    y = torch.tensor([0, 0, 1, 2, 2, 2])
    p = torch.tensor([0, 1, 1, 2, 0, 2])
    c = digits.confusion(p, y, n=3)
    assert c.tolist() == [[1, 1, 0], [0, 1, 0], [1, 0, 2]]


def test_default_mlp_reaches_90_percent_test_accuracy_within_200_steps():
    # 64→128→64→10, ReLU, Kaiming, CrossEntropyLoss, full batch, SGD lr 0.1.
    assert train(digits.DigitsConfig(), steps=200) >= 0.9


def test_small_init_learns_slower_than_kaiming():
    # The init ablation: randn·0.01 (the book's hand version) lags far behind after 200 steps.
    kaiming = train(digits.DigitsConfig(init="kaiming"), steps=200)
    small = train(digits.DigitsConfig(init="small"), steps=200)
    assert small < kaiming - 0.2
