"""The position-wise feed-forward part of a block: ReLU / GELU MLP, SwiGLU, or a mixture of
experts.

- MLP: proj(act(fc(x))), GPT-2's (GELU) or the 2017 Transformer's (ReLU).
- SwiGLU (Llama, Qwen): proj(silu(gate(x)) · fc(x)). SiLU ranges over about [−0.278, ∞):
  it is not a 0–1 gate.
- MoE: a router scores every expert (softmax), each token goes to its top_k experts
  (weights renormalised over the chosen ones), optional shared expert for every token.
  The Switch-Transformer balancing loss E · Σ_e f_e · P_e (f_e: fraction of the routed
  slots that went to e, P_e: mean router probability of e) is 1 when the load is uniform;
  the model's `aux_loss()` sums it over layers times balance_coef. `load` holds the last
  forward's per-expert fraction f (detached) for a lab to plot, `chosen` / `gates` each
  token's top_k experts and their renormalised weights ([B, T, k], detached).

Hooks: `hook_pre` / `hook_post` around the activation ([B, T, d_ff]); MoE: `hook_router`
[B, T, E] (router probabilities) and `hook_post` its output [B, T, d_model].
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from models.hooks import HookPoint
from models.transformer.config import TransformerConfig


class MLP(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.d_model, cfg.d_ff, bias=cfg.bias)
        self.proj = nn.Linear(cfg.d_ff, cfg.d_model, bias=cfg.bias)
        self.act = F.gelu if cfg.ffn == "gelu" else F.relu
        self.drop = nn.Dropout(cfg.dropout)
        self.hook_pre = HookPoint()
        self.hook_post = HookPoint()

    def forward(self, x: Tensor) -> Tensor:
        h = self.hook_post(self.act(self.hook_pre(self.fc(x))))  # [B, T, d_ff]
        return self.drop(self.proj(h))

    def residual_projections(self) -> list[nn.Linear]:
        return [self.proj]


class SwiGLU(nn.Module):
    def __init__(self, cfg: TransformerConfig, width: int | None = None):
        super().__init__()
        width = width or cfg.d_ff
        self.gate = nn.Linear(cfg.d_model, width, bias=cfg.bias)
        self.fc = nn.Linear(cfg.d_model, width, bias=cfg.bias)  # Llama's up_proj
        self.proj = nn.Linear(width, cfg.d_model, bias=cfg.bias)  # down_proj
        self.drop = nn.Dropout(cfg.dropout)
        self.hook_pre = HookPoint()  # the gate's input to SiLU
        self.hook_post = HookPoint()  # silu(gate) · up, what the down projection reads

    def forward(self, x: Tensor) -> Tensor:
        h = self.hook_post(F.silu(self.hook_pre(self.gate(x))) * self.fc(x))  # [..., width]
        return self.drop(self.proj(h))

    def residual_projections(self) -> list[nn.Linear]:
        return [self.proj]


class MoE(nn.Module):
    def __init__(self, cfg: TransformerConfig):
        super().__init__()
        self.n_experts, self.top_k = cfg.n_experts, cfg.top_k
        self.router = nn.Linear(cfg.d_model, cfg.n_experts, bias=False)
        self.experts = nn.ModuleList(SwiGLU(cfg, cfg.expert_ffn) for _ in range(cfg.n_experts))
        self.shared = SwiGLU(cfg, cfg.expert_ffn) if cfg.shared_expert else None
        self.hook_router = HookPoint()
        self.hook_post = HookPoint()
        self.balance = torch.zeros(())  # the last forward's balancing loss (with its graph)
        self.load = torch.zeros(cfg.n_experts)  # the last forward's f_e, detached
        self.chosen = torch.zeros(0, 0, cfg.top_k, dtype=torch.long)  # [B, T, k], detached
        self.gates = torch.zeros(0, 0, cfg.top_k)  # [B, T, k], their weights, detached

    def forward(self, x: Tensor) -> Tensor:
        B, T, d = x.shape
        flat = x.reshape(B * T, d)  # [N, d]
        probs = self.router(flat).softmax(dim=-1)  # [N, E]
        self.hook_router(probs.view(B, T, self.n_experts))  # [B, T, E]
        weight, chosen = probs.topk(self.top_k, dim=-1)  # [N, k] each
        weight = weight / weight.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            token, slot = (chosen == e).nonzero(as_tuple=True)  # the tokens sent to e
            if token.numel():
                out = out.index_add(0, token, expert(flat[token]) * weight[token, slot, None])
        if self.shared is not None:
            out = out + self.shared(flat)
        routed = F.one_hot(chosen, self.n_experts).sum(dim=(0, 1)).to(probs.dtype)  # [E]
        frac = routed / chosen.numel()  # f_e
        self.balance = self.n_experts * (frac * probs.mean(dim=0)).sum()
        self.load = frac.detach()
        self.chosen = chosen.detach().view(B, T, self.top_k)  # [B, T, k]
        self.gates = weight.detach().view(B, T, self.top_k)  # [B, T, k]
        return self.hook_post(out.view(B, T, d))  # [B, T, d_model]

    def residual_projections(self) -> list[nn.Linear]:
        experts = [*self.experts, *([self.shared] if self.shared is not None else [])]
        return [e.proj for e in experts]


def make_ffn(cfg: TransformerConfig, layer: int = 0) -> nn.Module:
    if cfg.ffn == "swiglu" or (cfg.ffn == "moe" and cfg.is_dense_ffn(layer)):
        return SwiGLU(cfg)
    if cfg.ffn == "moe":
        return MoE(cfg)
    return MLP(cfg)
