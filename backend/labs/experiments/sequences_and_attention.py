"""'Try this next' for chapters 5–6 (sequences; attention and the Transformer); the whole table and its
rules: backend/labs/experiments/__init__.py."""

from __future__ import annotations

from backend.labs.experiments.entry import experiment as _x

EXPERIMENTS: dict[str, list[dict]] = {
    # 5. Sequences
    "rnn": [
        _x(
            "explode",
            {"activation": "relu", "whh_scale": 2.0, "clip": False},
            "ReLU, Whh × 2, no clipping",
            "ReLU，Whh × 2，不裁剪",
            "do ‖h_t‖ and the gradient norm blow up over time? Then turn clipping on.",
            "‖h_t‖ 和梯度范数会不会随时间爆炸？然后把裁剪打开。",
        ),
        _x(
            "vanish",
            {"activation": "sigmoid", "whh_scale": 1.0},
            "Sigmoid",
            "sigmoid",
            "does the backprop gradient fade step by step? sigmoid' ≤ 0.25 at every step.",
            "反向梯度会不会一步步消失？每一步 sigmoid' ≤ 0.25。",
        ),
    ],
    "memory": [
        _x(
            "short",
            {"mode": "train", "delay": 5},
            "Delay 5",
            "延迟 5",
            "after a short delay, which cells recall the token? Read each one's accuracy against chance.",
            "短延迟下，哪些单元能记住那个符号？把各自的准确率和随机猜测的水平比一比。",
        ),
        _x(
            "long",
            {"mode": "train", "delay": 50},
            "Delay 50",
            "延迟 50",
            "which cells fall to chance, and does the LSTM's forget gate keep the token?",
            "哪些单元掉到随机猜测的水平？LSTM 的遗忘门能不能留住那个符号？",
        ),
        _x(
            "sweep",
            {"mode": "sweep"},
            "Accuracy vs delay",
            "准确率随延迟变化",
            "one curve per cell: where does each one stop remembering?",
            "每种单元一条曲线：它们各在哪里记不住了？",
        ),
    ],
    "seq2seq": [
        _x(
            "long",
            {"task": "reverse", "max_len": 20},
            "Reverse strings up to 20",
            "反转最长 20 的字符串",
            "does the single context vector hold up on long inputs, and does attention's alignment form an anti-diagonal?",
            "单个上下文向量在长输入上还撑得住吗？注意力的对齐矩阵会不会形成反对角线？",
        ),
        _x(
            "dates",
            {"task": "dates"},
            "Date normalisation",
            "日期格式转换",
            "does the alignment jump, each output digit looking at where that part of the date was written?",
            "对齐会不会跳：每个输出数字是否看向日期里那一部分写在哪里？",
        ),
    ],
    "embeddings": [
        _x(
            "en",
            {"text": "en"},
            "English text",
            "英文文本",
            "do words used in the same places drift together in the 2-D projection?",
            "用法相近的词会不会在二维投影里慢慢靠到一起？",
        ),
        _x(
            "tiny",
            {"d_model": 8, "min_count": 20},
            "8 dimensions, frequent words only",
            "8 维，只要常用词",
            "fewer words and dimensions: do clusters form sooner, and how clear are they?",
            "词少、维度低：簇会不会更早形成？清不清楚？",
        ),
    ],
    # 6. Attention and the Transformer
    "tokenizer": [
        _x(
            "tiny_vocab",
            {"sp_vocab": 32},
            "BPE vocabulary 32",
            "BPE 词表 32",
            "with few merges the text splits into many short pieces: more tokens per sentence.",
            "合并少，文本就切成很多小块：每句话的 token 变多。",
        ),
        _x(
            "big_vocab",
            {"sp_vocab": 2000},
            "BPE vocabulary 2000",
            "BPE 词表 2000",
            "which whole words become single tokens?",
            "哪些整词变成了单个 token？",
        ),
        _x(
            "en",
            {"source": "en"},
            "English text",
            "英文文本",
            "compare characters, words and BPE on English: count the tokens each gives.",
            "在英文上比较字符、词和 BPE：数数各切出多少 token。",
        ),
    ],
    "attention": [
        _x(
            "scores",
            {"preset": "scores"},
            "Scores [2, 0, −1]",
            "分数 [2, 0, −1]",
            "softmax gives [0.844, 0.114, 0.042] and the output [0.928, 0.270].",
            "softmax 得到 [0.844, 0.114, 0.042]，输出是 [0.928, 0.270]。",
        ),
        _x(
            "unscaled",
            {"preset": "causal", "d_probe": 1024},
            "√d probe at d = 1024",
            "√d 探针取 d = 1024",
            "raw score variance grows like d: how far does the softmax entropy fall without ÷√d?",
            "原始分数的方差随 d 增长：不除以 √d，softmax 的熵会降到多低？",
        ),
        _x(
            "tied",
            {"preset": "causal", "tie_qk": True},
            "Tie W_K = W_Q",
            "令 W_K = W_Q",
            "the score matrix QKᵀ becomes symmetric.",
            "分数矩阵 QKᵀ 变成对称的。",
        ),
    ],
    "positional-encoding": [
        _x(
            "offset",
            {"offset": 16},
            "Offset 16",
            "偏移 16",
            "PE·PEᵀ depends only on the offset: the same stripe pattern at every position.",
            "PE·PEᵀ 只取决于偏移：每个位置上都是同样的条纹。",
        ),
        _x(
            "base",
            {"base": 100.0},
            "Base 100",
            "底数 100",
            "the clock hands turn much faster: the slowest frequency no longer spans the context.",
            "时钟指针转得快多了：最慢的频率也覆盖不了整个上下文。",
        ),
        _x(
            "reverse",
            {"task": "reverse"},
            "Train on reversal",
            "在反转任务上训练",
            "reversing needs to know where each token is: compare with and without positions.",
            "反转需要知道每个 token 的位置：比较有位置和没位置的结果。",
        ),
    ],
    "gpt": [
        _x(
            "no_mask",
            {"data": "text-en", "causal": False},
            "Remove the causal mask",
            "去掉因果掩码",
            "the model can now read the answer: how low does the training loss go, and what does generation look like?",
            "模型现在能偷看答案：训练损失降到多低？生成的文字是什么样？",
        ),
        _x(
            "induction",
            {"data": "induction", "n_layers": 2},
            "Induction, 2 layers",
            "归纳任务，2 层",
            "does an induction head form: a layer-1 head looking one past the earlier copy of the current token?",
            "会不会出现归纳头：第 1 层的某个头看向当前 token 上一次出现位置的下一个？",
        ),
        _x(
            "no_pos",
            {"data": "reverse", "positional": "none"},
            "Reverse without positions",
            "不用位置编码做反转",
            "without positions, can the model tell where it is? Watch the loss and whether an anti-diagonal forms.",
            "没有位置信息，模型还分得清自己在哪吗？看损失，也看会不会形成反对角线。",
        ),
    ],
    "transformer": [
        _x(
            "pre",
            {"norm_placement": "pre"},
            "Pre-norm",
            "前置归一化",
            "compare the loss curve with post-norm: which is steadier early on?",
            "和后置归一化比较损失曲线：早期哪个更稳？",
        ),
        _x(
            "no_smooth",
            {"smoothing": 0.0},
            "No label smoothing",
            "不做标签平滑",
            "the loss can now fall towards 0; with smoothing it bottoms out above it.",
            "损失现在可以降到接近 0；有平滑时它停在 0 以上。",
        ),
        _x(
            "others",
            {"convention": "others", "smoothing": 0.1},
            "Smoothing spread over the others",
            "把平滑分给其他类",
            "the text's table (0.90 / 0.033) vs torch's (0.925 / 0.025): the target's share differs.",
            "书里的表（0.90 / 0.033）和 torch 的（0.925 / 0.025）：目标类的份额不同。",
        ),
    ],
}
