"""'Try this next' for chapters 7–8 (after the Transformer; real models); the whole table and its
rules: backend/labs/experiments/__init__.py."""

from __future__ import annotations

from backend.labs.experiments.entry import experiment as _x

EXPERIMENTS: dict[str, list[dict]] = {
    # 7. After the Transformer
    "kv-cache": [
        _x(
            "mha",
            {"n_kv_heads": 16},
            "MHA: 16 KV heads",
            "MHA：16 个 KV 头",
            "bytes per token double to 224 KiB; the cache for the batch doubles too.",
            "每个 token 的字节数翻倍到 224 KiB；整批的缓存也翻倍。",
        ),
        _x(
            "mqa",
            {"n_kv_heads": 1},
            "MQA: 1 KV head",
            "MQA：1 个 KV 头",
            "one shared KV head: 14 KiB per token, 16× less than MHA.",
            "共享一个 KV 头：每个 token 14 KiB，比 MHA 少 16 倍。",
        ),
        _x(
            "long",
            {"length": 40960, "batch": 1},
            "40,960 tokens, batch 1",
            "40,960 个 token，批大小 1",
            "the real Qwen3-0.6B (GQA-8) needs 4.375 GiB of cache for its full context.",
            "真实的 Qwen3-0.6B（GQA-8）在满上下文时需要 4.375 GiB 缓存。",
        ),
    ],
    "attention-variants": [
        _x(
            "mqa_like",
            {"gqa_kv_heads": 1},
            "GQA with 1 KV head",
            "GQA 只用 1 个 KV 头",
            "the GQA point slides to the smallest cache: does its loss follow MHA's?",
            "GQA 的点滑到最小缓存：它的损失还跟得上 MHA 吗？",
        ),
        _x(
            "rope_latent",
            {"mla_rope_in_latent": True},
            "RoPE inside MLA's latent",
            "把 RoPE 放进 MLA 的潜变量",
            "MLA's absorbed and explicit scores stop agreeing (they agree to ~1e-6 without it).",
            "MLA 吸收式和显式的分数不再一致（不这样时一致到约 1e-6）。",
        ),
        _x(
            "reverse",
            {"task": "reverse"},
            "Reversal",
            "反转任务",
            "a harder task: does any variant fall behind as the cache shrinks?",
            "更难的任务：缓存变小后，有没有变体落后？",
        ),
    ],
    "positions": [
        _x(
            "base",
            {"train_len": 32, "test_len": 128, "rope_theta": 10000, "causal": True},
            "Train at 32, test at 128",
            "在 32 上训练，在 128 上测试",
            "do any encodings keep their accuracy at 4× the trained length?",
            "在 4 倍训练长度上，有没有编码还保持准确率？",
        ),
        _x(
            "big_theta",
            {"rope_theta": 1e6},
            "RoPE θ = 10⁶",
            "RoPE θ = 10⁶",
            "raising θ slows the rotations: watch RoPE's accuracy past the trained length.",
            "增大 θ 让旋转变慢：看 RoPE 在训练长度之外的准确率。",
        ),
    ],
    "norms": [
        _x(
            "cold",
            {"compare": "placement", "warmup": 0, "norm": "layernorm", "qk_norm": False},
            "Four placements, no warm-up",
            "四种位置，不预热",
            "post-norm's gradient norms at init are uneven across layers.",
            "后置归一化在初始化时各层梯度范数很不均匀。",
        ),
        _x(
            "warm",
            {"compare": "placement", "warmup": 100, "norm": "layernorm", "qk_norm": False},
            "Four placements, 100-step warm-up",
            "四种位置，预热 100 步",
            "does a warm-up let post-norm leave chance sooner? Compare with the run without one.",
            "预热能不能让后置归一化更早离开随机猜测的水平？和不预热的那次比一比。",
        ),
        _x(
            "qk",
            {"compare": "qk_norm", "placement": "olmo2", "norm": "layernorm", "warmup": 0},
            "OLMo-2 placement: QK-norm off vs on",
            "OLMo-2 位置：QK-norm 关 / 开",
            "is the largest attention logit smaller with QK-norm? Its cap (dotted) grows with the learned gains.",
            "有 QK-norm 时，最大的注意力 logit 是不是更小？它的上限（虚线）随学到的增益增长。",
        ),
    ],
    "ffn-moe": [
        _x(
            "no_balance",
            {"balance": False},
            "No load balancing",
            "不做负载均衡",
            "the per-expert load: do a few experts take most tokens while the rest sit idle?",
            "看各专家的负载：是不是少数专家接走大部分 token，其余闲着？",
        ),
        _x(
            "top1",
            {"top_k": 1, "n_experts": 16},
            "16 experts, top-1",
            "16 个专家，top-1",
            "total parameters grow, active parameters per token shrink.",
            "总参数变多，每个 token 的激活参数变少。",
        ),
        _x(
            "shared",
            {"shared_expert": True},
            "Add a shared expert",
            "加一个共享专家",
            "as in DeepSeek-V3: every token also goes through one expert that is always on.",
            "和 DeepSeek-V3 一样：每个 token 还会经过一个始终开启的专家。",
        ),
    ],
    "sparse-attention": [
        _x(
            "tiny_window",
            {"window": 1},
            "Window 1",
            "窗口 1",
            "reachability after L layers: with a window of 1 a token sees only a few steps back.",
            "看 L 层之后的可达范围：窗口为 1 时，一个 token 只能看到前面几步。",
        ),
        _x(
            "one_sink",
            {"sinks": 1, "window": 2},
            "1 sink + window 2",
            "1 个汇点 + 窗口 2",
            "compare the loss past the window with and without sinks, then the accuracy by distance: which distances do sinks recover?",
            "比较窗口之外的损失（有汇点和没有汇点），再看按距离的准确率：汇点救回了哪些距离？",
        ),
        _x(
            "long",
            {"seq_len": 10, "window": 2},
            "Length 10, window 2",
            "长度 10，窗口 2",
            "reversal needs the far end of the sequence: which masks still reach it?",
            "反转要用到序列另一头：哪些掩码还能够到？",
        ),
    ],
    "linear-attention": [
        _x(
            "chunk1",
            {"chunk": 1},
            "Chunk size 1",
            "块大小 1",
            "chunked form with chunk 1 is the recurrent form: outputs still agree to ~1e-6.",
            "块大小为 1 的分块形式就是递推形式：输出仍一致到约 1e-6。",
        ),
        _x(
            "rewrites",
            {"mem_keys": 16, "mem_rewrites": 16},
            "16 keys, each written twice",
            "16 个键，每个写两次",
            "which rule overwrites a rewritten key, the delta rule or plain accumulation? Read the recall of the latest value.",
            "哪种规则能覆盖被重写的键：delta 规则还是简单累加？看最新值的召回。",
        ),
        _x(
            "pairs",
            {"n_pairs": 12, "d_state": 2},
            "12 pairs, state 2",
            "12 对，状态 2",
            "a constant-size state holds only so much: does recall drop as the pairs outgrow it?",
            "固定大小的状态容量有限：键值对超出后，召回率会不会下降？",
        ),
    ],
    # 8. Real models
    "real-bert": [
        _x(
            "it",
            {"text": "The animal didn't cross the street because it was too wide", "pair": False},
            "“…because it was too wide”",
            "“…because it was too wide”",
            "where do the heads send “it” now: towards street or animal? Compare with “tired”, head by head.",
            "各个头现在把 “it” 指向哪里：street 还是 animal？和 “tired” 逐个头比一比。",
        ),
        _x(
            "pair",
            {"text": "The cat sat on the mat", "pair": True},
            "A sentence pair",
            "句子对",
            "are there heads that attend across [SEP] from one sentence to the other?",
            "有没有头越过 [SEP] 从一句看向另一句？",
        ),
    ],
    "real-llm": [
        _x(
            "as_stored",
            {"qk_layout": "as_stored"},
            "Q/K rows as stored",
            "Q/K 行按文件原样",
            "llama.cpp permutes Q/K rows: without undoing it, RoPE rotates the wrong pairs and the text falls apart.",
            "llama.cpp 重排了 Q/K 的行：不还原，RoPE 转错了维度对，生成就乱了。",
        ),
        _x(
            "unpermuted",
            {"qk_layout": "unpermuted", "context": 2048},
            "Q/K rows unpermuted",
            "Q/K 行还原",
            "greedy “The capital of France is” continues with Paris.",
            "贪心解码 “The capital of France is” 接着写出 Paris。",
        ),
    ],
}
