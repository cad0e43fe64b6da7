"""'Try this next' for chapters 1–2 (learning is optimization; one neuron, probabilities and losses); the whole table and its
rules: backend/labs/experiments/__init__.py."""

from __future__ import annotations

from backend.labs.experiments.entry import experiment as _x

EXPERIMENTS: dict[str, list[dict]] = {
    # 1. Learning is optimization
    "apple": [
        _x(
            "one_step",
            {"lr": 1 / 18, "x0": 1.0, "forget_zero_grad": False},
            "lr = 1/18",
            "学习率 = 1/18",
            "the curvature is 18, so one step lands exactly on x = 2 (loss 0).",
            "曲率是 18，所以一步就正好落到 x = 2（损失为 0）。",
        ),
        _x(
            "diverge",
            {"lr": 0.12, "x0": 1.0, "forget_zero_grad": False},
            "lr = 0.12 (above 2/18)",
            "学习率 = 0.12（超过 2/18）",
            "x jumps from side to side of 2 and each jump is larger: the loss grows instead of falling.",
            "x 在 2 的两侧来回跳，而且越跳越远：损失不降反升。",
        ),
        _x(
            "no_zero",
            {"lr": 1 / 36, "forget_zero_grad": True},
            "Forget zero_grad",
            "忘记 zero_grad",
            "the gradients add up step after step, so x overshoots 2 although the learning rate is small.",
            "梯度一步一步累加起来，学习率虽小，x 还是冲过了 2。",
        ),
    ],
    "linear-regression": [
        _x(
            "mse",
            {"dataset": "two-points", "loss": "mse", "lr": 0.1},
            "Plain MSE instead of ½MSE",
            "用 MSE 代替 ½MSE",
            "the first step doubles (w = 0.8, b = 0.5 instead of 0.4, 0.25): the same lr means a step twice as big.",
            "第一步翻倍（w = 0.8、b = 0.5，而不是 0.4、0.25）：同一个学习率，步子大了一倍。",
        ),
        _x(
            "too_fast",
            {"dataset": "two-points", "loss": "half_mse", "lr": 0.6},
            "lr = 0.6 (½MSE)",
            "学习率 = 0.6（½MSE）",
            "above 0.584 the path on the loss contour zig-zags outwards and the loss explodes.",
            "超过 0.584 后，等高线上的路径向外锯齿形发散，损失爆炸。",
        ),
        _x(
            "sgd",
            {"dataset": "two-points", "batch": "sgd", "lr": 0.1},
            "One point at a time (SGD)",
            "每次一个点（SGD）",
            "the path on the contour wobbles instead of going straight, yet still ends at (1, 1).",
            "等高线上的路径不再笔直而是摇摆，但最后仍到达（1, 1）。",
        ),
    ],
    "live-stream": [
        _x(
            "raw",
            {"features": "raw", "lr": 1e-9},
            "Raw inputs, lr 1e-9",
            "原始输入，学习率 1e-9",
            "the loss grows about 418× per epoch and becomes inf, then nan: lr is above 2/λmax ≈ 9.3e-11.",
            "损失每轮约涨 418 倍，变成 inf 再变 nan：学习率超过了 2/λmax ≈ 9.3e-11。",
        ),
        _x(
            "zscore",
            {"features": "zscore", "lr": 0.01},
            "Z-scored inputs, lr 0.01",
            "标准化输入，学习率 0.01",
            "the loss falls steadily towards the closed-form optimum (MSE ≈ 19,565).",
            "损失稳步下降，逼近闭式最优解（MSE ≈ 19,565）。",
        ),
        _x(
            "onehot",
            {"features": "onehot", "lr": 0.01},
            "One-hot push",
            "推送改成独热编码",
            "push stops being a number (SMS = 2 × app): compare the final loss with the z-scored run.",
            "推送不再被当成数字（短信 = 2 × 应用推送）：把最终损失和标准化那次比一比。",
        ),
    ],
    "temperature": [
        _x(
            "shuffled",
            {"split": "shuffled"},
            "Shuffle before splitting",
            "先打乱再划分",
            "the validation loss looks better than it should: future days leak into training.",
            "验证损失好得不真实：未来的日子泄漏进了训练集。",
        ),
        _x(
            "fixed_c",
            {"split": "time", "train_c": False},
            "Keep C fixed",
            "固定 C 不训练",
            "only A/C and B/C matter: with C fixed the fit is as good, and the valley of equal solutions collapses to a point.",
            "真正起作用的只有 A/C 和 B/C：固定 C 拟合一样好，等价解的山谷缩成一个点。",
        ),
    ],
    # 2. One neuron, probabilities and losses
    "logistic": [
        _x(
            "circles",
            {"dataset": "circles", "features": "linear"},
            "Concentric circles, linear features",
            "同心圆，线性特征",
            "a straight boundary cannot separate rings: accuracy stays near chance.",
            "直线边界分不开圆环：准确率停在随机猜测的水平附近。",
        ),
        _x(
            "quadratic",
            {"dataset": "circles", "features": "quadratic"},
            "Add x1², x2², x1x2",
            "加上 x1²、x2²、x1x2",
            "the boundary becomes a circle and accuracy climbs close to 100%.",
            "边界变成了圆，准确率升到接近 100%。",
        ),
        _x(
            "imbalance",
            {"dataset": "blobs", "pos_frac": 0.05},
            "Only 5% positives",
            "只有 5% 正例",
            "accuracy looks high even when recall is poor: read the confusion matrix, not the accuracy.",
            "召回率很差时准确率照样很高：要看混淆矩阵，别只看准确率。",
        ),
    ],
    "softmax-ce": [
        _x(
            "overflow",
            {"logits": [90.0, 1.0, 0.1, -3.0]},
            "A logit of 90",
            "一个 90 的 logit",
            "naive exp overflows in float32 above ≈ 88.7; subtracting the max first does not.",
            "在 float32 里，朴素的 exp 超过约 88.7 就溢出；先减去最大值就不会。",
        ),
        _x(
            "negative",
            {"logits": [1.0, 0.5, 0.0, -3.0]},
            "A large negative logit",
            "一个很负的 logit",
            "“square and normalize” gives −3 a large share; softmax gives it almost nothing.",
            "“平方再归一化”会给 −3 很大的份额；softmax 几乎不给。",
        ),
        _x(
            "miss",
            {"logits": [-2.0, 2.5, 0.1, -3.0], "target": 0},
            "A confident miss",
            "自信地猜错",
            "the cross-entropy of the right class soars (p = 0.01 costs 4.605).",
            "正确类别的交叉熵猛涨（p = 0.01 要付 4.605）。",
        ),
    ],
    "svm": [
        _x(
            "big_c",
            {"C": 100.0},
            "C = 100",
            "C = 100",
            "larger C punishes every hinge violation harder: the margin narrows.",
            "C 越大，每个越界的点罚得越重：间隔变窄。",
        ),
        _x(
            "small_c",
            {"C": 0.01},
            "C = 0.01",
            "C = 0.01",
            "the margin widens and more points sit inside it.",
            "间隔变宽，更多点落在间隔里面。",
        ),
        _x(
            "logistic",
            {"loss": "logistic"},
            "Logistic loss instead of hinge",
            "用逻辑损失代替合页损失",
            "every point keeps pulling on the boundary, not only the support vectors.",
            "每个点都在拉边界，而不只是支持向量。",
        ),
    ],
}
