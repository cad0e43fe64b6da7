"""scikit-learn's 8×8 handwritten digits, a stratified split, and the 32×32 → 8×8 reduction.

The data ship inside scikit-learn (the file ``sklearn.datasets.load_digits`` reads: 1,797
images, no download; read here with numpy, without importing scikit-learn). They are the
UCI "optdigits" set: NIST's normalized 32×32 binary bitmaps, cut into non-overlapping 4×4
blocks, each block's "on" pixels counted, so every input is an integer 0..16.
`bitmap_to_digits` applies the same reduction to a bitmap the learner draws, after
`fit_bitmap` has scaled and centred the stroke the way the normalized bitmaps are (the
digit fills the height; columns 0 and 7 of the 8×8 images are almost always empty).
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

SIDE = 8  # the dataset's images are 8×8
BITMAP = 32  # the bitmaps they were counted from are 32×32
BLOCK = BITMAP // SIDE  # 4×4 blocks, so a count is 0..16
MAX_VALUE = BLOCK * BLOCK
FIT_HEIGHT = 32  # the normalized digit fills the bitmap's height ...
FIT_WIDTH = 28  # ... and stays clear of the outer columns (as in the data set)


def _csv_path() -> Path:
    """scikit-learn's digits.csv.gz, found without importing scikit-learn (seconds)."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or spec.origin is None:
        raise RuntimeError("scikit-learn is not installed: it ships the digits data")
    return Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz"


@lru_cache(maxsize=1)
def _load_numpy() -> tuple[np.ndarray, np.ndarray]:
    """As `sklearn.datasets.load_digits` reads it: 64 pixel counts and the label a row."""
    rows = np.loadtxt(_csv_path(), delimiter=",", dtype=np.float32)  # [1797, 65]
    images = rows[:, :-1].reshape(-1, SIDE, SIDE)  # [1797, 8, 8]
    return np.ascontiguousarray(images), rows[:, -1].astype(np.int64)


def load() -> tuple[torch.Tensor, torch.Tensor]:
    """(images [1797, 8, 8] float 0..16, labels [1797] int64), a fresh copy each call."""
    images, labels = _load_numpy()
    return torch.from_numpy(images.copy()), torch.from_numpy(labels.copy())


def stratified_split(
    labels: torch.Tensor, test_frac: float, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(train indices, test indices): each class split in the same proportion, seeded.

    Per class, round(n_c · test_frac) samples go to the test split, so the class mix of both
    splits matches the whole set's to within one sample per class.
    """
    if not 0.0 < test_frac < 1.0:
        raise ValueError(f"test_frac must be in (0, 1), got {test_frac}")
    gen = torch.Generator().manual_seed(seed)
    train, test = [], []
    for c in torch.unique(labels).tolist():
        idx = torch.nonzero(labels == c).flatten()
        idx = idx[torch.randperm(len(idx), generator=gen)]
        n_test = max(1, min(len(idx) - 1, round(len(idx) * test_frac)))
        test.append(idx[:n_test])
        train.append(idx[n_test:])
    # Shuffle across classes so a mini-batch slice is not one class.
    train_idx, test_idx = torch.cat(train), torch.cat(test)
    train_idx = train_idx[torch.randperm(len(train_idx), generator=gen)]
    test_idx = test_idx[torch.randperm(len(test_idx), generator=gen)]
    return train_idx, test_idx


def fit_bitmap(bitmap: torch.Tensor) -> torch.Tensor:
    """Scale and centre the ink of a binary [32, 32] bitmap like NIST's normalized bitmaps.

    The bounding box of the ink is scaled (aspect kept) until it is FIT_HEIGHT tall or
    FIT_WIDTH wide, whichever comes first, and centred. An empty bitmap is returned as is.
    """
    rows = torch.nonzero(bitmap.any(dim=1)).flatten()
    cols = torch.nonzero(bitmap.any(dim=0)).flatten()
    if len(rows) == 0:
        return bitmap.clone()
    crop = bitmap[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1].float()
    h, w = crop.shape
    scale = min(FIT_HEIGHT / h, FIT_WIDTH / w)
    nh, nw = max(1, min(BITMAP, round(h * scale))), max(1, min(BITMAP, round(w * scale)))
    resized = F.interpolate(crop[None, None], size=(nh, nw), mode="bilinear", antialias=True)
    resized = resized[0, 0] >= 0.5  # [nh, nw], binary again
    out = torch.zeros(BITMAP, BITMAP, dtype=torch.bool)
    top, left = (BITMAP - nh) // 2, (BITMAP - nw) // 2
    out[top : top + nh, left : left + nw] = resized
    return out


def bitmap_to_digits(bitmap: torch.Tensor) -> torch.Tensor:
    """[32, 32] binary bitmap -> [8, 8] float: the number of on pixels in each 4×4 block."""
    blocks = bitmap.float().reshape(SIDE, BLOCK, SIDE, BLOCK)  # [8, 4, 8, 4]
    return blocks.sum(dim=(1, 3))  # [8, 8], values 0..16


def from_drawing(grey: torch.Tensor, fit: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """A drawn [32, 32] grey image (0 blank .. 1 ink) -> (the binary bitmap, the 8×8 input).

    Binarized at one half (the source bitmaps are binary), optionally fitted, then counted.
    """
    bitmap = grey >= 0.5
    if fit:
        bitmap = fit_bitmap(bitmap)
    return bitmap, bitmap_to_digits(bitmap)
