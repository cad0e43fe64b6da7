"""models.seq2seq and models.data.seq2seq_tasks: the curriculum's teacher-forcing pairs from
the tokenisation of 今天天气真好, well-posed tasks (no target in the encoder), the config's
parameter count, attention's alignment, and free running that reads its own outputs."""

from __future__ import annotations

import datetime as dt

import pytest
import torch

from models.data.seq2seq_tasks import (
    BOS,
    EOS,
    FORMS,
    Seq2SeqTask,
    teacher_forcing_pairs,
    write_date,
)
from models.seq2seq import Seq2Seq, Seq2SeqConfig, cut_at_eos, loss_fn


def test_teacher_forcing_pairs_of_the_worked_example():
    tf = teacher_forcing_pairs("今天天气真好")
    pairs = [(i[0], o[0]) for i, o in zip(tf["inputs"], tf["labels"], strict=True)]
    # The curriculum's six pairs, then the EOS the decoder is also taught to write.
    assert pairs == [
        (BOS, "今"),
        ("今", "天"),
        ("天", "天"),
        ("天", "气"),
        ("气", "真"),
        ("真", "好"),
        ("好", EOS),
    ]
    assert len(tf["ids"]) == 6  # one character, one id
    assert tf["ids"][1] == tf["ids"][2]  # both 天 are the same id
    assert len(set(tf["ids"])) == 5
    # The decoder's inputs are its labels shifted right by one, BOS in front.
    assert [i[1] for i in tf["inputs"][1:]] == [o[1] for o in tf["labels"][:-1]]


def test_dates_are_written_three_ways_and_normalised_to_iso():
    day = dt.date(2021, 5, 3)
    assert [write_date(day, f) for f in FORMS] == ["3 May 2021", "May 3, 2021", "2021年5月3日"]
    task = Seq2SeqTask("dates")
    for f in FORMS:
        assert task.target(write_date(day, f)) == "2021-05-03"
    assert task.target("31 February 2021") is None  # no such day
    assert task.target("3 Mai 2021") is None
    sources = task.sources(300, torch.Generator().manual_seed(0))
    assert {task.target(s)[:2] for s in sources} <= {"19", "20"}  # 1950..2049
    assert any("年" in s for s in sources) and any("," in s for s in sources)
    assert all(not task.unknown(s) and len(task.encode(s)) == len(s) for s in sources)
    assert task.unknown("3 Mäy 2021!") == ["ä", "!"]


def test_reverse_batches_are_seeded_and_well_posed():
    task = Seq2SeqTask("reverse", 3, 12)
    a = task.sample(64, torch.Generator().manual_seed(5))
    b = task.sample(64, torch.Generator().manual_seed(5))
    assert a.sources == b.sources and torch.equal(a.src, b.src)
    assert all(t == s[::-1] for s, t in zip(a.sources, a.targets, strict=True))
    assert {len(s) for s in a.sources} <= set(range(3, 13))
    bos, eos = task.vocab.index(BOS), task.vocab.index(EOS)
    for i, (s, t) in enumerate(zip(a.sources, a.targets, strict=True)):
        n = len(s)
        assert a.src_len[i] == n and task.decode(a.src[i].tolist()) == s
        assert a.tgt_in[i, 0] == bos and task.decode(a.tgt_in[i, 1 : n + 1].tolist()) == t
        assert a.tgt_out[i, n] == eos and task.decode(a.tgt_out[i, :n].tolist()) == t
        assert not a.tgt_in[i, n + 1 :].any() and not a.src[i, n:].any()  # padding is 0
        assert eos not in a.src[i].tolist()  # the encoder never sees the target's markers
    fixed = task.sources(10, torch.Generator().manual_seed(1), length=7)
    assert {len(s) for s in fixed} == {7}


@pytest.mark.parametrize("attention", [False, True])
def test_param_count_from_the_config_matches_torch(attention):
    cfg = Seq2SeqConfig(d_vocab=29, d_hidden=48, attention=attention)
    model = Seq2Seq(cfg)
    assert cfg.param_count() == sum(p.numel() for p in model.parameters())


def test_alignment_is_a_distribution_over_the_real_source_positions():
    task = Seq2SeqTask("reverse", 3, 9)
    b = task.sample(16, torch.Generator().manual_seed(2))
    torch.manual_seed(0)
    model = Seq2Seq(Seq2SeqConfig(task.vocab_size, attention=True))
    from models.hooks import capture

    with capture(model, "hook_alignment") as store:
        logits = model(b.src, b.src_len, b.tgt_in)
    align = store["hook_alignment"]  # [B, T_dec, T_enc]
    assert logits.shape == (*b.tgt_in.shape, task.vocab_size)
    assert align.shape == (16, b.tgt_in.shape[1], b.src.shape[1])
    torch.testing.assert_close(align.sum(-1), torch.ones(align.shape[:2]))
    pad = (b.src == 0)[:, None].expand_as(align)
    assert torch.all(align[pad] == 0)  # padding gets no weight
    plain = Seq2Seq(Seq2SeqConfig(task.vocab_size, attention=False))
    _, none = plain.greedy(b.src, b.src_len, 4)
    assert not none.any()  # one context vector: nothing to align


@pytest.mark.parametrize("attention", [False, True])
def test_padding_changes_nothing_and_free_running_reads_its_own_outputs(attention):
    task = Seq2SeqTask("reverse", 3, 12)
    torch.manual_seed(0)
    model = Seq2Seq(Seq2SeqConfig(task.vocab_size, attention=attention))
    short, long = "abc", "qwertyuiopas"
    both = task.batch([short, long])
    alone = task.batch([short])
    toks, _ = model.greedy(both.src, both.src_len, 6)
    toks_alone, _ = model.greedy(alone.src, alone.src_len, 6)
    assert torch.equal(toks[0], toks_alone[0])  # the longer neighbour's padding is invisible
    with torch.no_grad():
        logits = model(both.src, both.src_len, both.tgt_in)[0, :4]
        torch.testing.assert_close(logits, model(alone.src, alone.src_len, alone.tgt_in)[0])
    # Free running = teacher forcing on the model's own previous outputs.
    fed = torch.cat([torch.full((2, 1), task.vocab.index(BOS)), toks[:, :-1]], 1)
    with torch.no_grad():
        forced = model(both.src, both.src_len, fed)
        assert torch.equal(forced.argmax(-1), toks)
    # The tokens compared above are argmaxes of logits equal only to float rounding (another
    # batch, step by step or at once): they agree because no choice was close to a tie.
    top2 = forced.topk(2, -1).values
    assert (top2[..., 0] - top2[..., 1]).min() > 1e-4
    assert cut_at_eos([5, 6, 2, 7], 2) == [5, 6] and cut_at_eos([5, 6], 2) == [5, 6]


def test_loss_ignores_padding():
    logits = torch.randn(2, 3, 5)
    y = torch.tensor([[3, 4, 0], [1, 0, 0]])
    want = torch.nn.functional.cross_entropy(logits[y != 0], y[y != 0])
    torch.testing.assert_close(loss_fn(logits, y), want)
