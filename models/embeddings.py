"""Why words become vectors: ids, one-hot, a small hand-made table, and learned embeddings.

Everything the `embeddings` lab shows is computed here with torch:

- ids invent an order: with 苹果 = 1, 香蕉 = 2, 梨 = 3, the sum of the first two ids is the
  third's, and 苹果 is "closer" to 香蕉 than to 梨, though nothing about fruit says so;
- one-hot rows are orthogonal: their Gram matrix is the identity, every pair's cosine 0;
- a 2-D table (sweet, tech) makes similarity measurable: cosines of its rows;
- one-hot × E picks a row of E (an embedding layer is that lookup, without the product);
- a trained model's embedding matrix, projected to 2-D by PCA with signs kept stable from
  one frame to the next, and which characters ended up close (cosine).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class EmbeddingsConfig:
    # The ids a vocabulary might hand out: the order is the order words were listed in.
    id_words: tuple[str, ...] = ("苹果", "香蕉", "梨")
    first_id: int = 1
    # The (sweet, tech) table: 小米 is the phone maker, hence tech 0.92.
    table_words: tuple[str, ...] = ("苹果", "梨", "小米", "橙子")
    table_dims: tuple[str, ...] = ("sweet", "tech")
    table: tuple[tuple[float, float], ...] = (
        (0.95, 0.85),
        (0.90, 0.05),
        (0.10, 0.92),
        (0.92, 0.01),
    )
    # Learned embeddings: the characters that say something are the ones seen often.
    min_count: int = 5
    neighbours: int = 8
    # A group "ended up together" when its mean inner cosine beats its mean cosine to the
    # comparison set by this much: random rows of width 16 have cosines of spread ~0.25,
    # a mean over the ~6 pairs of four marks ~0.1, so chance stays below it.
    margin: float = 0.25
    groups: tuple[str, ...] = ("marks", "vowels")


DEFAULT = EmbeddingsConfig()

# Sentence and clause marks (not quotes: those open and close, and sit in different places).
MARKS = frozenset(".,!?;:。，！？；：、")
VOWELS = frozenset("aeiou")


# -- ids and one-hot -------------------------------------------------------------------------


def id_arithmetic(cfg: EmbeddingsConfig = DEFAULT) -> dict:
    """The ids as numbers: id(a) + id(b) and which word has that id; |id differences|."""
    ids = torch.arange(len(cfg.id_words)) + cfg.first_id  # [W]
    total = ids[0] + ids[1]
    hit = (ids == total).nonzero().flatten()
    diff = (ids[:, None] - ids[None, :]).abs()  # [W, W]: an "order" nothing asked for
    return {
        "words": list(cfg.id_words),
        "ids": ids.tolist(),
        "sum": int(total),
        "sum_word": cfg.id_words[int(hit[0])] if len(hit) else None,
        "distance": diff.tolist(),
    }


def one_hot(n: int) -> Tensor:
    """n one-hot rows: the identity, float32 [n, n]."""
    return torch.nn.functional.one_hot(torch.arange(n), n).float()


def cosine_matrix(x: Tensor) -> Tensor:
    """Pairwise cosine of the rows of x [n, d] -> [n, n]; a zero row has cosine 0 with all."""
    unit = x / x.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return unit @ unit.T


def table_tensor(rows: Iterable[Sequence[float]] | None = None) -> Tensor:
    """The (sweet, tech) table as float32 [4, 2] (the config's, or the learner's edit)."""
    return torch.tensor(DEFAULT.table if rows is None else [list(r) for r in rows])


def lookup(table: Tensor, index: int) -> tuple[Tensor, Tensor, float]:
    """one_hot(index) @ table, the row table[index], and max |difference| (0: a lookup)."""
    vec = one_hot(table.shape[0])[index]  # [n]
    product = vec @ table  # [d]
    return vec, product, float((product - table[index]).abs().max())


# -- learned embeddings -------------------------------------------------------------------------


def frequent(text: str, vocab: Sequence[str], min_count: int) -> list[int]:
    """Ids of the vocabulary's characters seen at least min_count times in text, by id."""
    counts = Counter(text)
    return [i for i, c in enumerate(vocab) if counts[c] >= min_count]


def pca_2d(x: Tensor, reference: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Project rows of x [n, d] on its first two principal components.

    Returns (points [n, 2], components [d, 2], explained variance ratio [2]). A component's
    sign is arbitrary (SVD may return v or −v), so it is fixed: against `reference` (the
    previous frame's components) each keeps the sign whose dot product with its
    predecessor is positive; without one, the entry of largest |loading| is made positive.
    Points then move smoothly as the weights change instead of mirroring between frames.
    """
    centred = x - x.mean(dim=0, keepdim=True)  # [n, d]
    _, s, vh = torch.linalg.svd(centred, full_matrices=False)  # vh [min(n, d), d]
    comps = vh[:2].T.clone()  # [d, k<=2]
    if comps.shape[1] < 2:  # a single dimension: a zero second axis
        comps = torch.cat([comps, torch.zeros(x.shape[1], 2 - comps.shape[1])], dim=1)
        s = torch.cat([s, torch.zeros(2 - len(s))])
    if reference is not None and reference.shape == comps.shape:
        sign = torch.sign((comps * reference).sum(dim=0))  # [2]
    else:
        top = comps.abs().argmax(dim=0)  # [2]
        sign = torch.sign(comps[top, torch.arange(2)])
    comps = comps * torch.where(sign == 0, torch.ones_like(sign), sign)
    var = s**2
    ratio = var[:2] / var.sum().clamp_min(1e-12)
    return centred @ comps, comps, ratio  # [n, 2], [d, 2], [2]


def nearest(cos: Tensor, index: int, k: int) -> tuple[list[int], list[float]]:
    """The k rows most similar to row `index` of a cosine matrix, itself left out."""
    row = cos[index].clone()
    row[index] = float("-inf")
    k = min(k, len(row) - 1)
    top = row.topk(k)
    return top.indices.tolist(), top.values.tolist()


def group_members(name: str, chars: Sequence[str]) -> tuple[list[int], list[int]]:
    """Positions in `chars` of a group and of what it is compared with.

    marks: sentence marks against letters (any script); vowels: a e i o u against the other
    lower-case Latin letters.
    """
    if name == "marks":
        inside = [i for i, c in enumerate(chars) if c in MARKS]
        others = [i for i, c in enumerate(chars) if unicodedata.category(c).startswith("L")]
    elif name == "vowels":
        inside = [i for i, c in enumerate(chars) if c in VOWELS]
        others = [i for i, c in enumerate(chars) if "a" <= c <= "z" and c not in VOWELS]
    else:
        raise ValueError(f"unknown group {name!r}")
    return inside, others


def group_check(cos: Tensor, chars: Sequence[str], name: str, margin: float) -> dict | None:
    """Mean cosine inside a group vs to its comparison set; None if either is too small."""
    inside, others = group_members(name, chars)
    if len(inside) < 2 or not others:
        return None
    a = torch.tensor(inside)
    block = cos[a][:, a]  # [g, g]
    g = len(inside)
    within = (block.sum() - block.diagonal().sum()) / (g * (g - 1))
    across = cos[a][:, torch.tensor(others)].mean()
    return {
        "group": name,
        "members": [chars[i] for i in inside],
        "within": float(within),
        "across": float(across),
        "holds": bool(within - across > margin),
    }
