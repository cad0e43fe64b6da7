"""A character RNN: embedding -> one plain RNN layer (models/recurrent.py) -> linear to vocab.

h_t = act(x_t·W_xh + h_{t-1}·W_hh + b), act tanh, ReLU or sigmoid; logits_t = h_t·W_out + c.
Trained on the next character (cross-entropy in nats per character). Besides the model:

- `generate`: greedy (temperature 0) or sampled at a temperature, from a torch.Generator,
  keeping each step's hidden state and its most likely next characters.
- `longest_verbatim`: the memorisation meter, the longest span of generated text found
  verbatim in the training text. The text's char-RNN recipe (Adam 1e-3, batch 64, window
  32, clip 5) reaches 0.12 nats/char on a novel by epoch 13: that is memorisation, and
  MEMORISATION_NATS is the meter's threshold.
- `bptt`: ‖h_t‖ over t and the gradient backprop carries to each step, ‖∂L_T/∂h_t‖ for the
  loss at the last step only, beside its bound ‖∂L_T/∂h_T‖ · (max f′ · ‖W_hh‖₂)^(T−t).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from models.generate import sampling_probs
from models.norm_examples import derivative_curves
from models.recurrent import Activation, Recurrent, RecurrentConfig

MEMORISATION_NATS = 0.12  # the recipe's loss on a novel by epoch 13: memorised, not learned
RECIPE = {"optimizer": "adam", "lr": 1e-3, "batch": 64, "window": 32, "clip": 5.0}
UNK = 0  # models/data/tokenizers.CharTokenizer's id 0: never a character of the text


@dataclass(frozen=True)
class CharRNNConfig:
    vocab_size: int
    d_embed: int = 32
    d_hidden: int = 64
    activation: Activation = "tanh"
    whh_scale: float = 1.0

    def recurrent(self) -> RecurrentConfig:
        return RecurrentConfig(
            kind="rnn",
            d_in=self.d_embed,
            d_hidden=self.d_hidden,
            activation=self.activation,
            whh_scale=self.whh_scale,
        )

    def param_count(self) -> int:
        """Embedding table, the recurrent layer, and the output layer with its bias."""
        v, h = self.vocab_size, self.d_hidden
        return v * self.d_embed + self.recurrent().param_count() + h * v + v


class CharRNN(nn.Module):
    def __init__(self, cfg: CharRNNConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_embed)
        self.rnn = Recurrent(cfg.recurrent())
        self.head = nn.Linear(cfg.d_hidden, cfg.vocab_size)

    def forward(
        self, ids: Tensor, state: Tensor | None = None, keep_steps: bool = False
    ) -> tuple[Tensor, Tensor]:
        """ids [B, T] -> (logits [B, T, V], final h [B, H]); hidden states on rnn.hook_hidden,
        and with keep_steps the graph's own h_t in `self.rnn.steps`."""
        hs, final = self.rnn(self.embed(ids), state, keep_steps=keep_steps)  # [B, T, H]
        return self.head(hs), final

    def loss(self, x: Tensor, y: Tensor) -> Tensor:
        """Mean next-character cross-entropy, nats per character."""
        logits, _ = self(x)
        return F.cross_entropy(logits.flatten(0, 1), y.flatten())

    @torch.no_grad()
    def hidden_states(self, ids: Tensor) -> tuple[Tensor, Tensor]:
        """One sequence ids [T] -> (h_t for every t [T, H], next-char probabilities [V])."""
        hs, _ = self.rnn(self.embed(ids[None]))  # [1, T, H]
        probs = self.head(hs[0, -1]).softmax(-1)  # [V]
        return hs[0], probs


@dataclass(frozen=True)
class GenStep:
    char: int  # the id chosen
    prob: float  # its probability under the distribution sampled from
    top: list[tuple[int, float]]  # the most likely next characters under that distribution
    hidden: Tensor  # [H] the state that produced it


@torch.no_grad()
def generate(
    model: CharRNN,
    prompt: list[int],
    n_new: int,
    temperature: float,
    generator: torch.Generator,
    top: int = 8,
) -> list[GenStep]:
    """n_new characters after `prompt` (at least one id): temperature <= 0 is greedy (the
    argmax, the generator unused); else softmax(logits / T) sampled with `generator`."""
    if not prompt:
        raise ValueError("generation needs a prompt of at least one character")
    hs, h = model.rnn(model.embed(torch.tensor([prompt])))  # [1, T, H]
    last = hs[0, -1]
    out: list[GenStep] = []
    for _ in range(n_new):
        logits = model.head(last)  # [V]
        logits[UNK] = float("-inf")  # the unknown-character id never appeared in the text
        probs = sampling_probs(logits, temperature)  # [V], float64
        if temperature <= 0:
            char = int(probs.argmax())
        else:
            char = int(torch.multinomial(probs, 1, generator=generator))
        k = min(top, probs.numel())
        p, i = probs.topk(k)
        out.append(
            GenStep(char, float(probs[char]), list(zip(i.tolist(), p.tolist(), strict=True)), last)
        )
        hs, h = model.rnn(model.embed(torch.tensor([[char]])), h)  # [1, 1, H]
        last = hs[0, -1]
    return out


def longest_verbatim(generated: str, text: str) -> tuple[int, int, int]:
    """The longest span of `generated` that occurs verbatim in `text`: (length, its start in
    `generated`, where it occurs in `text`); (0, 0, -1) when no character does."""
    best, start, where = 0, 0, -1
    for i in range(len(generated)):
        # Only spans longer than the best so far matter: grow while they are still in text.
        while i + best < len(generated):
            at = text.find(generated[i : i + best + 1])
            if at < 0:
                break
            best, start, where = best + 1, i, at
    return best, start, where


@lru_cache(maxsize=4)
def fprime_max(activation: str) -> float:
    """The activation's largest derivative, by autograd (sigmoid 0.25, tanh 1, ReLU 1)."""
    return derivative_curves()["max"][activation]


def bptt(model: CharRNN, x: Tensor, y: Tensor) -> dict[str, Tensor | float]:
    """Through time on windows x, y [B, T]: mean ‖h_t‖, the mean ‖∂L_T/∂h_t‖ for the loss at
    the last step only (autograd on the graph's own h_t; no parameter's .grad is touched),
    and its bound ‖∂L_T/∂h_T‖ · (max f′ · ‖W_hh‖₂)^(T−t), each [T]."""
    logits, _ = model(x, keep_steps=True)  # [B, T, V]
    steps = model.rnn.steps
    model.rnn.steps = []  # the module keeps no graph
    loss = F.cross_entropy(logits[:, -1], y[:, -1])
    grads = torch.autograd.grad(loss, steps)  # each [B, H]: dL_T/dh_t
    with torch.no_grad():
        h = torch.stack(steps, 1)  # [B, T, H]
        g = torch.stack(grads, 1)  # [B, T, H]
        g_norm = g.norm(dim=-1)  # [B, T]
        whh = float(torch.linalg.matrix_norm(model.rnn.W_hh.detach(), 2))
        rate = fprime_max(model.cfg.activation) * whh
        back = torch.arange(x.shape[1] - 1, -1, -1, dtype=torch.float64)  # T−1 … 0
        bound = g_norm[:, -1].mean().double() * rate**back  # [T]
    return {
        "h_norm": h.norm(dim=-1).mean(0),
        "grad_norm": g_norm.mean(0),
        "bound": bound.float(),
        "whh_spectral": whh,
        "rate": rate,
    }
