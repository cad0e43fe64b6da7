"""The embeddings lab's numbers (CURRICULUM.md chapter 5) and its PCA with stable signs."""

import math

import torch

from models import embeddings as emb


def test_ids_invent_an_order_apple_plus_banana_is_pear():
    ids = emb.id_arithmetic()
    assert ids["words"] == ["苹果", "香蕉", "梨"]
    assert ids["ids"] == [1, 2, 3]
    assert ids["sum"] == 3 and ids["sum_word"] == "梨"  # 苹果 1 + 香蕉 2 = 梨 3
    d = ids["distance"]
    assert d[0][1] == 1 and d[0][2] == 2  # 苹果 "nearer" 香蕉 than 梨: an order from listing


def test_one_hot_makes_every_pair_orthogonal():
    hot = emb.one_hot(3)
    # the Gram matrix is the identity; bitwise: sums of 0s and 1s round nowhere
    assert torch.equal(hot @ hot.T, torch.eye(3))
    cos = emb.cosine_matrix(hot)
    assert torch.equal(cos, torch.eye(3))  # every pair's cosine 0
    dist = torch.cdist(hot, hot)
    off = dist[~torch.eye(3, dtype=torch.bool)]
    assert torch.allclose(off, torch.full_like(off, math.sqrt(2)))  # all equally far apart


def test_the_sweet_tech_table_and_its_cosines():
    table = emb.table_tensor()
    want = [[0.95, 0.85], [0.90, 0.05], [0.10, 0.92], [0.92, 0.01]]
    assert table.dtype == torch.float32 and torch.equal(table, torch.tensor(want))
    words = list(emb.DEFAULT.table_words)
    assert words == ["苹果", "梨", "小米", "橙子"]
    cos = emb.cosine_matrix(table)
    at = lambda a, b: round(float(cos[words.index(a), words.index(b)]), 3)  # noqa: E731
    assert at("梨", "橙子") == 0.999
    assert at("苹果", "梨") == 0.781
    assert at("苹果", "小米") == 0.743
    assert at("梨", "小米") == 0.163
    assert torch.allclose(cos, cos.T) and torch.allclose(cos.diagonal(), torch.ones(4))


def test_one_hot_times_e_is_a_row_lookup():
    table = emb.table_tensor([[0.3, -0.2], [1.0, 0.5], [-0.7, 0.1], [0.0, 0.9]])
    for i in range(4):
        vec, row, err = emb.lookup(table, i)
        assert vec.tolist() == [1.0 if j == i else 0.0 for j in range(4)]
        assert torch.equal(row, table[i]) and err == 0.0
    layer = torch.nn.Embedding.from_pretrained(table)
    assert torch.equal(layer(torch.tensor([2])), table[2:3])  # an embedding layer: the lookup


def test_pca_is_the_centred_svd_and_matches_torch_pca_lowrank():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(40, 6, generator=g) * torch.tensor([3.0, 2.0, 1.0, 0.5, 0.2, 0.1])
    points, comps, ratio = emb.pca_2d(x)
    assert torch.allclose(comps.T @ comps, torch.eye(2), atol=1e-5)
    assert torch.allclose(points, (x - x.mean(0)) @ comps, atol=1e-5)
    _, s, v = torch.pca_lowrank(x, q=6, center=True, niter=6)
    assert torch.allclose(comps.abs(), v[:, :2].abs(), atol=1e-4)  # same axes, up to sign
    total = ((x - x.mean(0)) ** 2).sum()
    assert torch.allclose(ratio, s[:2] ** 2 / total, atol=1e-5)
    # Without a reference, each axis's largest |loading| is positive.
    top = comps.abs().argmax(0)
    assert (comps[top, torch.arange(2)] > 0).all()


def _cloud(direction: list[float]) -> torch.Tensor:
    """Points spread along `direction` (and a little across it), in 2-D."""
    v = torch.tensor(direction) / torch.tensor(direction).norm()
    w = torch.stack([-v[1], v[0]])
    t = torch.linspace(-3, 3, 50)[:, None]  # [50, 1]
    across = torch.tensor([0.3, -0.3]).repeat(25)[:, None]  # [50, 1]
    return t * v + across * w  # [50, 2]


def test_a_reference_keeps_the_sign_where_the_largest_loading_rule_would_flip():
    # The main axis turns a little, from (1, −0.9) to (0.9, −1): its largest |loading|
    # moves from the first entry (positive) to the second (negative).
    _, first, _ = emb.pca_2d(_cloud([1.0, -0.9]))
    _, alone, _ = emb.pca_2d(_cloud([0.9, -1.0]))
    _, kept, _ = emb.pca_2d(_cloud([0.9, -1.0]), reference=first)
    assert float(alone[:, 0] @ first[:, 0]) < -0.9  # the rule alone mirrors the picture
    assert float(kept[:, 0] @ first[:, 0]) > 0.9  # the reference keeps it
    assert (torch.sign((kept * first).sum(0)) > 0).all()


def test_nearest_leaves_itself_out_and_sorts_by_cosine():
    cos = emb.cosine_matrix(emb.table_tensor())
    idx, vals = emb.nearest(cos, 1, 3)  # 梨
    assert idx[0] == 3 and round(vals[0], 3) == 0.999  # 橙子 first
    assert 1 not in idx and vals == sorted(vals, reverse=True)


def test_group_check_on_made_up_vectors():
    chars = list("ae.,xyz")
    v = torch.tensor(
        [[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0.9, 0.1], [0, 0, 1], [0.1, 0, 1], [0, 0.1, 1]]
    )
    cos = emb.cosine_matrix(v)
    marks = emb.group_check(cos, chars, "marks", 0.25)
    assert marks["members"] == [".", ","] and marks["holds"]
    assert marks["within"] > 0.9 and marks["across"] < 0.2
    vowels = emb.group_check(cos, chars, "vowels", 0.25)
    assert vowels["members"] == ["a", "e"] and vowels["holds"]
    assert emb.group_check(cos, list("a.xyz") + ["b", "c"], "vowels", 0.25) is None  # one vowel
    # Marks compared with letters of any script: Chinese characters count.
    inside, others = emb.group_members("marks", list("。，他的a1"))
    assert inside == [0, 1] and others == [2, 3, 4]


def test_frequent_keeps_characters_seen_often_enough():
    vocab = ["<unk>", "a", "b", "c"]
    assert emb.frequent("aaabbc", vocab, 2) == [1, 2]
    assert emb.frequent("aaabbc", vocab, 1) == [1, 2, 3]
