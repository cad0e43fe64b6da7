"""StepBPE, one merge at a time, agrees with the pure-Python BPETrainer merge for merge."""

import pytest

from models.data.texts import input_and_labels, load_text
from models.data.tokenizers import BPETrainer
from models.tokenize_steps import StepBPE, baselines, split


@pytest.mark.parametrize("name", ["zh", "en"])
def test_stepping_equals_training_in_one_go(name):
    text = load_text(name)
    bpe = StepBPE(text)
    assert bpe.merges == [] and bpe.vocab_size == len(set(text)) + 1  # characters + <unk>
    assert bpe.n_tokens == len(text)  # no merges: one token per character
    for k in (1, 5, 40, 120):
        while len(bpe.merges) < k:
            assert bpe.merge_once() is not None
        ref = BPETrainer(text, k)
        assert bpe.merges == ref.merges
        assert bpe.vocab_size == ref.vocab_size
        assert bpe.encode(text) == ref.encode(text)
        assert bpe.n_tokens == len(ref.encode(text))  # the training state is the encoding
        assert bpe.decode(bpe.encode(text)) == text


def test_token_count_falls_and_vocabulary_grows_until_nothing_repeats():
    text = load_text("zh")
    bpe = StepBPE(text)
    tokens, vocab = [bpe.n_tokens], [bpe.vocab_size]
    while (m := bpe.merge_once()) is not None:
        assert m.count >= 2
        tokens.append(bpe.n_tokens)
        vocab.append(bpe.vocab_size)
    assert bpe.finished and bpe.merge_once() is None
    assert all(b < a for a, b in zip(tokens, tokens[1:], strict=False))  # every merge saves
    assert vocab == sorted(vocab) and vocab[-1] > vocab[0]
    assert "小烧" in [m.piece for m in bpe.merges[:5]]
    counts = bpe.piece_counts()
    assert sum(counts.values()) == bpe.n_tokens
    assert bpe.piece_id("小烧麦") > 0 and bpe.piece_id("not a piece") == 0


def test_characters_words_and_bpe_on_one_sentence():
    text = load_text("zh")
    bpe = StepBPE(text)
    for _ in range(40):
        bpe.merge_once()
    base = baselines(text)
    sentence = "小烧麦学说话"
    char, word, ours = (split(t, sentence) for t in (base["char"], base["word"], bpe))
    assert char.pieces == list(sentence)
    assert word.pieces == [sentence]  # no spaces in Chinese: a "word" is the whole run
    assert "".join(ours.pieces) == sentence and len(char.pieces) > len(ours.pieces) > 1
    assert ours.ids == bpe.encode(sentence)


def test_a_sequence_trains_as_input_and_labels():
    assert input_and_labels([11, 27, 42, 2]) == ([11, 27, 42], [27, 42, 2])
