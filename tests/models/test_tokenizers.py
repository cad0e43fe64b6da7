import pytest
import torch

from models.data.texts import (
    MAX_PASTED_BYTES,
    check_pasted,
    input_and_labels,
    lm_batch,
    load_text,
    split,
)
from models.data.tokenizers import (
    UNK,
    BPETrainer,
    CharTokenizer,
    SentencePieceTokenizer,
    WordTokenizer,
    make_tokenizer,
)

MIXED = "今天天气真好。\nThe little dumpling  said: hello, hello!\n\n小烧麦说：“你好”。"


@pytest.mark.parametrize("name", ["zh", "en"])
def test_bundled_texts_load(name):
    text = load_text(name)
    assert 2_000 < len(text.encode("utf-8")) < 20_000
    assert ("小烧麦" in text) == (name == "zh") and ("Shaomai" in text) == (name == "en")
    with pytest.raises(ValueError, match="unknown text"):
        load_text("fr")


@pytest.mark.parametrize("kind", ["char", "word", "bpe", "bpe-simple"])
@pytest.mark.parametrize("name", ["zh", "en"])
def test_tokenizers_round_trip_their_training_text(kind, name):
    text = load_text(name)
    tok = make_tokenizer(kind, text, vocab_size=10_000)
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert all(0 <= i < tok.vocab_size for i in ids)
    head = text[: text.index("\n") + 1]  # the title line
    assert "".join(tok.pieces(head)).replace("▁", " ").lstrip() == head  # ▁: sentencepiece space
    assert tok.id_to_piece(ids[1]) == tok.pieces(text)[1]


@pytest.mark.parametrize("kind", ["char", "word", "bpe", "bpe-simple"])
def test_round_trip_keeps_newlines_spaces_and_full_width_punctuation(kind):
    tok = make_tokenizer(kind, MIXED, vocab_size=100)
    assert tok.decode(tok.encode(MIXED)) == MIXED


def test_unknown_characters_map_to_unk():
    tok = CharTokenizer("abc")
    assert tok.encode("abz") == [1, 2, 0]
    assert tok.pieces("z") == [UNK] and tok.id_to_piece(0) == UNK


def test_word_tokenizer_keeps_the_most_frequent_words():
    tok = WordTokenizer("a a a b b c", max_vocab=4)  # <unk>, "a", " ", "b"
    assert tok.vocab_size == 4
    assert tok.pieces("a c") == ["a", " ", UNK]
    assert WordTokenizer("小烧麦说话，小烧麦。").pieces("小烧麦说话，") == ["小烧麦说话", "，"]


def test_bigger_pieces_give_shorter_sequences():
    text = load_text("en")
    n_char, n_bpe_small, n_bpe_big = (
        len(make_tokenizer(kind, text, v).encode(text))
        for kind, v in (("char", 0), ("bpe", 100), ("bpe", 500))
    )
    assert n_char > n_bpe_small > n_bpe_big


def test_sentencepiece_clamps_vocab_size_both_ways():
    text = load_text("en")
    small = SentencePieceTokenizer(text, vocab_size=5)
    assert small.requested_vocab_size == 5
    assert small.vocab_size >= len(set(text))  # every character still has a piece
    big = SentencePieceTokenizer(text, vocab_size=100_000)
    assert small.vocab_size < big.vocab_size < 100_000
    assert SentencePieceTokenizer(text, vocab_size=300).vocab_size == 300
    with pytest.raises(ValueError):
        SentencePieceTokenizer("\n\n", vocab_size=50)


def test_bpe_merges_are_recorded_in_the_order_learned():
    bpe = BPETrainer("low low low lower lowest", n_merges=10)
    pieces = [m.piece for m in bpe.merges]
    assert pieces[:2] == ["lo", "low"]
    assert pieces.index(" low") > pieces.index("low")
    counts = [m.count for m in bpe.merges]
    assert counts == sorted(counts, reverse=True) and min(counts) >= 2
    assert bpe.pieces("lowlow") == ["low", "low"]
    zh = BPETrainer(load_text("zh"), n_merges=50)
    assert "小烧" in [m.piece for m in zh.merges[:5]]


def test_sequence_becomes_input_and_labels():
    assert input_and_labels([11, 27, 42, 2]) == ([11, 27, 42], [27, 42, 2])


def test_pasted_text_is_capped_in_bytes():
    assert check_pasted("hello") == "hello"
    assert check_pasted("xy" * (MAX_PASTED_BYTES // 2))
    with pytest.raises(ValueError, match="200,001 bytes"):
        check_pasted("ab" * 100_000 + "c")
    with pytest.raises(ValueError, match="300,000 bytes"):
        check_pasted("烧" * 100_000)  # 3 bytes each in UTF-8
    with pytest.raises(ValueError, match="10 bytes"):
        check_pasted("烧烧烧x", max_bytes=5)
    with pytest.raises(ValueError):
        check_pasted("")


def test_lm_batches_are_random_shifted_windows():
    ids = torch.arange(100)
    x, y = lm_batch(ids, batch=8, n_ctx=16, generator=torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (8, 16)
    assert torch.equal(y, x + 1)  # each window is consecutive, labels shifted by one
    assert int(y.max()) <= 99
    train, val = split(ids, 0.1)
    assert len(train) == 90 and torch.equal(val, ids[90:])
    with pytest.raises(ValueError):
        lm_batch(ids[:10], batch=2, n_ctx=16)
