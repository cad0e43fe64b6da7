"""Linear attention (`mixer="linear"`) and the delta rule (`mixer="delta"`): token mixers
whose memory of the past is one fixed-size matrix per head instead of a growing KV cache.

Linear attention (Katharopoulos et al. 2020) replaces softmax(q·k) by φ(q)·φ(k) with
φ = elu + 1 > 0. Causal, the output of query t is

    o_t = φ(q_t)ᵀ S_t / φ(q_t)ᵀ z_t,   S_t = Σ_{i≤t} φ(k_i) v_iᵀ,   z_t = Σ_{i≤t} φ(k_i)

and it can be computed three ways that give the same numbers:
- parallel: the masked [T, T] matrix φ(Q)φ(K)ᵀ times V, like softmax attention;
- recurrent: one token at a time, S and z updated in place (what a decode step does);
- chunked: parallel inside chunks of C tokens, the state carried from chunk to chunk.

The delta rule (DeltaNet, Schlag et al. 2021; Yang et al. 2024) writes with a correction:
S_t = S_{t-1} + β_t k_t (v_t − S_{t-1}ᵀ k_t)ᵀ with ‖k‖ = 1 and β_t ∈ (0, 1). With β = 1 it
replaces the value stored under k_t instead of adding to it; plain accumulation keeps the
stale value beside the new one. Its parallel form solves a unit lower-triangular system
for the written vectors U: (I + diag(β) tril(KKᵀ, −1)) U = diag(β) V, then O = tril(QKᵀ) U.

Shapes: q, k [B, H, T, d_k], v [B, H, T, d_v]; the state S is [B, H, d_k, d_v] (read as
qᵀS), plus z [B, H, d_k] for linear attention.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from models.hooks import HookPoint, is_capturing
from models.transformer.config import TransformerConfig

State = tuple[Tensor, ...]


def feature_map(x: Tensor) -> Tensor:
    """φ(x) = elu(x) + 1: positive, so every weight φ(q)·φ(k) is too and the normaliser > 0."""
    return F.elu(x) + 1.0


def _tril(T: int, device: torch.device, diagonal: int = 0) -> Tensor:
    return torch.ones(T, T, dtype=torch.bool, device=device).tril(diagonal)


# -- linear attention: three forms ------------------------------------------------------------
def linear_weights(q: Tensor, k: Tensor) -> Tensor:
    """The implicit causal pattern: row t holds φ(q_t)·φ(k_i) / Σ_j φ(q_t)·φ(k_j), i ≤ t.
    q, k already featured. [B, H, T, T], rows sum to 1 (as softmax's do)."""
    scores = (q @ k.transpose(-2, -1)).masked_fill(~_tril(q.shape[2], q.device), 0.0)
    return scores / scores.sum(-1, keepdim=True)  # [B, H, T, T]


def linear_parallel(
    q: Tensor, k: Tensor, v: Tensor, normalize: bool = True
) -> tuple[Tensor, State]:
    """All T outputs at once from the masked [T, T] matrix; also the final state."""
    scores = (q @ k.transpose(-2, -1)).masked_fill(~_tril(q.shape[2], q.device), 0.0)
    out = scores @ v  # [B, H, T, d_v]
    if normalize:
        out = out / scores.sum(-1, keepdim=True)
    return out, (k.transpose(-2, -1) @ v, k.sum(2))  # S [B, H, d_k, d_v], z [B, H, d_k]


def empty_linear_state(q: Tensor, v: Tensor) -> State:
    B, H, _, dk = q.shape
    S = q.new_zeros(B, H, dk, v.shape[-1])
    return S, q.new_zeros(B, H, dk)


def linear_recurrent(
    q: Tensor, k: Tensor, v: Tensor, state: State | None = None, normalize: bool = True
) -> tuple[Tensor, State]:
    """One token at a time: S += φ(k_t) v_tᵀ, z += φ(k_t), o_t = φ(q_t)ᵀS / φ(q_t)ᵀz."""
    S, z = state if state is not None else empty_linear_state(q, v)
    outs = []
    for t in range(q.shape[2]):
        kt, vt, qt = k[:, :, t], v[:, :, t], q[:, :, t]  # [B, H, d]
        S = S + kt[..., :, None] * vt[..., None, :]  # [B, H, d_k, d_v]
        z = z + kt
        o = (qt[..., None, :] @ S)[..., 0, :]  # [B, H, d_v]
        if normalize:
            o = o / (qt * z).sum(-1, keepdim=True)
        outs.append(o)
    return torch.stack(outs, dim=2), (S, z)  # [B, H, T, d_v]


def linear_chunked(
    q: Tensor, k: Tensor, v: Tensor, chunk: int, state: State | None = None, normalize: bool = True
) -> tuple[Tensor, State]:
    """Parallel inside each chunk of `chunk` tokens, the state carried between chunks: the
    past chunks' contribution is φ(q)ᵀS (one matmul), the chunk's own is a small masked
    matrix. chunk = T is the parallel form; chunk = 1 the recurrent one."""
    S, z = state if state is not None else empty_linear_state(q, v)
    outs = []
    for s in range(0, q.shape[2], chunk):
        qc, kc, vc = q[:, :, s : s + chunk], k[:, :, s : s + chunk], v[:, :, s : s + chunk]
        scores = (qc @ kc.transpose(-2, -1)).masked_fill(~_tril(qc.shape[2], q.device), 0.0)
        num = qc @ S + scores @ vc  # [B, H, C, d_v]
        if normalize:
            num = num / ((qc * z[:, :, None]).sum(-1, keepdim=True) + scores.sum(-1, keepdim=True))
        outs.append(num)
        S = S + kc.transpose(-2, -1) @ vc
        z = z + kc.sum(2)
    return torch.cat(outs, dim=2), (S, z)


# -- the delta rule: three forms --------------------------------------------------------------
def _delta_written(k: Tensor, v: Tensor, beta: Tensor, S0: Tensor | None) -> Tensor:
    """The vectors the delta rule adds, U [B, H, T, d_v]: u_i = β_i (v_i − k_iᵀS_{i-1})."""
    T = k.shape[2]
    target = v if S0 is None else v - k @ S0  # what is left to write after the old state
    A = (k @ k.transpose(-2, -1)).masked_fill(~_tril(T, k.device, -1), 0.0)  # [B, H, T, T]
    A = A * beta[..., None] + torch.eye(T, device=k.device, dtype=k.dtype)
    rhs = beta[..., None] * target  # [B, H, T, d_v]
    return torch.linalg.solve_triangular(A, rhs, upper=False, unitriangular=True)


def delta_parallel(q: Tensor, k: Tensor, v: Tensor, beta: Tensor) -> tuple[Tensor, State]:
    """beta [B, H, T]. O = tril(QKᵀ) U with U from one triangular solve."""
    U = _delta_written(k, v, beta, None)
    scores = (q @ k.transpose(-2, -1)).masked_fill(~_tril(q.shape[2], q.device), 0.0)
    return scores @ U, (k.transpose(-2, -1) @ U,)  # [B, H, T, d_v]; S [B, H, d_k, d_v]


def delta_recurrent(
    q: Tensor, k: Tensor, v: Tensor, beta: Tensor, state: State | None = None
) -> tuple[Tensor, State]:
    """One token at a time: read what k_t holds, write β_t of the difference, read with q_t."""
    B, H, T, dk = q.shape
    S = state[0] if state is not None else q.new_zeros(B, H, dk, v.shape[-1])
    outs = []
    for t in range(T):
        kt, vt, qt, bt = k[:, :, t], v[:, :, t], q[:, :, t], beta[:, :, t, None]  # [B, H, d]
        old = (kt[..., None, :] @ S)[..., 0, :]  # [B, H, d_v]: what key k_t reads now
        S = S + kt[..., :, None] * (bt * (vt - old))[..., None, :]  # [B, H, d_k, d_v]
        outs.append((qt[..., None, :] @ S)[..., 0, :])
    return torch.stack(outs, dim=2), (S,)


def delta_chunked(
    q: Tensor, k: Tensor, v: Tensor, beta: Tensor, chunk: int, state: State | None = None
) -> tuple[Tensor, State]:
    """The parallel form inside each chunk, starting from the state the chunks before left."""
    B, H, T, dk = q.shape
    S = state[0] if state is not None else q.new_zeros(B, H, dk, v.shape[-1])
    outs = []
    for s in range(0, T, chunk):
        qc, kc, vc, bc = (x[:, :, s : s + chunk] for x in (q, k, v, beta))
        U = _delta_written(kc, vc, bc, S)
        scores = (qc @ kc.transpose(-2, -1)).masked_fill(~_tril(qc.shape[2], q.device), 0.0)
        outs.append(qc @ S + scores @ U)  # [B, H, C, d_v]
        S = S + kc.transpose(-2, -1) @ U
    return torch.cat(outs, dim=2), (S,)


# -- the mixers -------------------------------------------------------------------------------
class LinearAttention(nn.Module):
    """`mixer="linear"` or `"delta"`: q, k, v from one fused projection (as MHA), the memory
    per head a d_head × d_head matrix. Trains in the parallel form; with a cache (a
    `StateCache`) it continues from the stored state in the chunked form (one chunk: the
    new rows), so a decode step costs the same at any length."""

    def __init__(self, cfg: TransformerConfig, layer: int):
        super().__init__()
        self.layer = layer
        self.delta = cfg.mixer == "delta"
        H, dh, d = cfg.n_heads, cfg.d_head, cfg.d_model
        self.n_heads, self.d_head = H, dh
        self.qkv = nn.Linear(d, 3 * H * dh, bias=cfg.bias)
        if self.delta:
            self.beta = nn.Linear(d, H, bias=cfg.bias)  # write strength per head and token
        self.out = nn.Linear(H * dh, d, bias=cfg.bias)
        self.hook_q, self.hook_k, self.hook_v = HookPoint(), HookPoint(), HookPoint()
        self.hook_pattern = HookPoint()  # linear only: the implicit [T, T] weights
        self.hook_z = HookPoint()

    def features(self, x: Tensor) -> tuple[Tensor, ...]:
        """x [B, T, d_model] -> (q, k, v[, beta]) as the forms take them: linear, φ(q), φ(k);
        delta, q and k scaled to unit length and β = sigmoid(·) per head."""
        B, T, _ = x.shape
        H, dh = self.n_heads, self.d_head
        q, k, v = self.qkv(x).view(B, T, 3, H, dh).permute(2, 0, 3, 1, 4)  # 3 × [B, H, T, dh]
        q, k, v = self.hook_q(q), self.hook_k(k), self.hook_v(v)
        if not self.delta:
            return feature_map(q), feature_map(k), v
        beta = torch.sigmoid(self.beta(x)).transpose(1, 2)  # [B, H, T]
        return F.normalize(q, dim=-1), F.normalize(k, dim=-1), v, beta

    @torch.no_grad()
    def forms(self, x: Tensor, chunk: int) -> dict[str, Tensor]:
        """The mixer's output before `out` on x [B, T, d_model] (its input, after the
        norm), computed each way: {"parallel", "recurrent", "chunked"} -> [B, H, T, d_head]."""
        parts = self.features(x)
        if self.delta:
            par, rec, chk = delta_parallel, delta_recurrent, delta_chunked
        else:
            par, rec, chk = linear_parallel, linear_recurrent, linear_chunked
        return {
            "parallel": par(*parts)[0],
            "recurrent": rec(*parts)[0],
            "chunked": chk(*parts, chunk)[0],
        }

    def forward(
        self,
        x: Tensor,
        t_past: int = 0,
        cache=None,
        shared: dict | None = None,
        key_mask: Tensor | None = None,
    ) -> Tensor:
        if key_mask is not None:
            raise ValueError("a recurrent mixer reads every earlier token: no key_mask")
        B, T, _ = x.shape
        parts = self.features(x)
        state = cache.entries[self.layer] if cache is not None else None
        if state is None and cache is None:
            z, new = (delta_parallel if self.delta else linear_parallel)(*parts)
            if not self.delta and is_capturing(self.hook_pattern):
                self.hook_pattern(linear_weights(parts[0], parts[1]))
        else:
            z, new = (delta_chunked if self.delta else linear_chunked)(*parts, T, state)
        if cache is not None:
            cache.entries[self.layer] = new
        z = self.hook_z(z)  # [B, H, T, dh]
        return self.out(z.transpose(1, 2).reshape(B, T, self.n_heads * self.d_head))
