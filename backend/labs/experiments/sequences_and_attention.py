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
            "‖h_t‖ and the gradient norm blow up over time; then turn clipping on.",
            "‖h_t‖ 和梯度范数随时间爆炸；然后把裁剪打开。",
        ),
        _x(
            "vanish",
            {"activation": "sigmoid", "whh_scale": 1.0},
            "Sigmoid",
            "sigmoid",
            "the backprop gradient per time step fades: sigmoid' ≤ 0.25 at every step.",
            "每个时间步的反向梯度逐渐消失：每一步 sigmoid' ≤ 0.25。",
        ),
    ],
    "memory": [
        _x(
            "short",
            {"mode": "train", "delay": 5},
            "Delay 5",
            "延迟 5",
            "all three cells recall the token after a short delay.",
            "短延迟下三种单元都能记住那个符号。",
        ),
        _x(
            "long",
            {"mode": "train", "delay": 50},
            "Delay 50",
            "延迟 50",
            "the plain RNN falls to chance while the LSTM's forget gate keeps the token.",
            "普通 RNN 掉到瞎猜的水平，而 LSTM 的遗忘门留住了那个符号。",
        ),
        _x(
            "sweep",
            {"mode": "sweep"},
            "Accuracy vs delay",
            "准确率随延迟变化",
            "one curve per cell: where each one stops remembering.",
            "每种单元一条曲线：看它们各在哪里记不住了。",
        ),
    ],
    "seq2seq": [
        _x(
            "long",
            {"task": "reverse", "max_len": 20},
            "Reverse strings up to 20",
            "反转最长 20 的字符串",
            "the single context vector fails on long inputs; attention's alignment stays a clean anti-diagonal.",
            "单个上下文向量在长输入上失败；注意力的对齐矩阵保持干净的反对角线。",
        ),
        _x(
            "dates",
            {"task": "dates"},
            "Date normalisation",
            "日期格式转换",
            "the alignment jumps: each output digit looks at where that part of the date was written.",
            "对齐会跳：每个输出数字看向日期里那一部分写在哪里。",
        ),
    ],
    "embeddings": [
        _x(
            "en",
            {"text": "en"},
            "English text",
            "英文文本",
            "words used in the same places drift together in the 2-D projection.",
            "用法相近的词在二维投影里慢慢靠到一起。",
        ),
        _x(
            "tiny",
            {"d_model": 8, "min_count": 20},
            "8 dimensions, frequent words only",
            "8 维，只要常用词",
            "fewer words and dimensions: the clusters form faster but blur more.",
            "词少、维度低：簇形成得更快，但也更模糊。",
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
            "whole words and common phrases become single tokens.",
            "整个词和常见短语变成了单个 token。",
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
            "raw score variance grows like d; without ÷√d the softmax entropy collapses to one-hot.",
            "原始分数的方差随 d 增长；不除以 √d，softmax 的熵塌缩成独热。",
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
            "the training loss drops abnormally low (the model reads the answer) while generation is garbage.",
            "训练损失低得反常（模型偷看了答案），而生成的文字是乱码。",
        ),
        _x(
            "induction",
            {"data": "induction", "n_layers": 2},
            "Induction, 2 layers",
            "归纳任务，2 层",
            "an induction head forms: a layer-1 head looks one past the earlier copy of the current token.",
            "归纳头出现：第 1 层的某个头看向当前 token 上一次出现位置的下一个。",
        ),
        _x(
            "no_pos",
            {"data": "reverse", "positional": "none"},
            "Reverse without positions",
            "不用位置编码做反转",
            "without positions the model cannot tell where it is: the loss stalls and no anti-diagonal forms.",
            "没有位置信息，模型不知道自己在哪：损失停住，也形成不了反对角线。",
        ),
    ],
    "transformer": [
        _x(
            "pre",
            {"norm_placement": "pre"},
            "Pre-norm",
            "前置归一化",
            "compare the loss curve with post-norm: pre-norm is steadier early on.",
            "和后置归一化比较损失曲线：前置在早期更稳。",
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
