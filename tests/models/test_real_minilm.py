"""all-MiniLM-L6-v2 from its package, in our Transformer family, against transformers.BertModel.

Both run the same shipped safetensors: our hidden states and every layer's attention
probabilities must equal BertModel's (eager attention, output_attentions) within 1e-4 on a
padded batch holding a sentence pair; the sentence embedding equals sentence-transformers'
pooling (mean over real tokens, L2-normalised) computed from BertModel's output.
"""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

from models.hooks import capture  # noqa: E402
from models.real.minilm import (  # noqa: E402
    MAX_TOKENS,
    encode,
    load_minilm,
    minilm_dir,
    sentence_embedding,
)

SENTENCES = [
    "The animal didn't cross the street because it was too tired",
    "A man is eating food.",
    ("A man is eating a piece of bread.", "A cheetah is running behind its prey."),
]


@pytest.fixture(scope="module")
def loaded():
    return load_minilm()


@pytest.fixture(scope="module")
def reference():
    ref = transformers.BertModel.from_pretrained(str(minilm_dir()), attn_implementation="eager")
    return ref.eval()


@pytest.fixture(scope="module")
def both(loaded, reference):
    model, tok = loaded
    batch = encode(tok, SENTENCES)
    with torch.inference_mode(), capture(model, "blocks.*.attn.hook_pattern") as store:
        hidden = model(batch.ids, batch.mask, batch.token_types)
    with torch.inference_mode():
        out = reference(
            input_ids=batch.ids,
            attention_mask=batch.mask.long(),
            token_type_ids=batch.token_types,
            output_attentions=True,
        )
    return batch, hidden, dict(store), out


def test_encode_pads_pairs_and_marks_unknowns(loaded):
    _, tok = loaded
    batch = encode(tok, SENTENCES)
    assert batch.ids.shape == batch.mask.shape == batch.token_types.shape
    assert batch.tokens[0][:3] == ["[CLS]", "the", "animal"] and batch.tokens[0][-1] == "[SEP]"
    assert batch.mask.sum(1).tolist() == [len(t) for t in batch.tokens]
    assert batch.token_types[2].max() == 1 and batch.token_types[:2].max() == 0
    assert "[UNK]" in encode(tok, "你好 hello").tokens[0]
    long = encode(tok, "word " * 300)
    assert long.ids.shape[1] == MAX_TOKENS and long.truncated == [True]
    assert encode(tok, "").tokens == [["[CLS]", "[SEP]"]]
    with pytest.raises(ValueError):
        encode(tok, [])


def test_hidden_states_equal_bert(both):
    batch, hidden, _, out = both
    assert hidden.shape == (3, batch.ids.shape[1], 384)
    real = batch.mask[..., None]
    diff = ((hidden - out.last_hidden_state).abs() * real).max().item()
    assert diff < 1e-4


def test_every_layers_attention_equals_bert(both):
    batch, _, store, out = both
    real_rows = batch.mask[:, None, :, None]
    for i in range(6):
        pattern = store[f"blocks.{i}.attn.hook_pattern"]
        assert pattern.shape == (3, 12, batch.ids.shape[1], batch.ids.shape[1])
        assert ((pattern - out.attentions[i]).abs() * real_rows).max().item() < 1e-4
        pad_keys = pattern.masked_select(~batch.mask[:, None, None, :])
        assert pad_keys.abs().max().item() == 0.0  # padding is never attended to


def test_sentence_embedding_equals_reference_pooling(both):
    batch, hidden, _, out = both
    m = batch.mask[..., None].float()
    mean = (out.last_hidden_state * m).sum(1) / m.sum(1)
    want = mean / mean.norm(dim=-1, keepdim=True)
    got = sentence_embedding(hidden, batch.mask)
    assert got.shape == (3, 384)
    assert torch.allclose(got.norm(dim=-1), torch.ones(3), atol=1e-6)
    assert (got - want).abs().max().item() < 1e-5


def test_similar_sentences_are_closer(loaded):
    model, tok = loaded
    s = ["A man is eating food.", "A man is eating a piece of bread.", "A cheetah is running."]
    batch = encode(tok, s)
    with torch.inference_mode():
        emb = sentence_embedding(model(batch.ids, batch.mask), batch.mask)
    sim = emb @ emb.T
    assert sim[0, 1] > 0.6 > sim[0, 2]


def test_padding_does_not_change_a_sentence(loaded):
    model, tok = loaded
    alone = encode(tok, "hi")
    padded = encode(tok, ["hi", SENTENCES[0]])
    with torch.inference_mode():
        a = model(alone.ids, alone.mask)
        b = model(padded.ids, padded.mask)
    n = alone.ids.shape[1]
    assert (a[0] - b[0, :n]).abs().max().item() < 1e-5


def test_loaded_once_frozen_and_counted(loaded, reference):
    model, tok = loaded
    again, tok2 = load_minilm()
    assert again is model and tok2 is tok
    assert not model.training and not any(p.requires_grad for p in model.parameters())
    pooler = sum(p.numel() for p in reference.pooler.parameters())
    n = sum(p.numel() for p in model.parameters())
    assert n == model.cfg.param_count() == sum(p.numel() for p in reference.parameters()) - pooler
    assert n == 22_565_376
