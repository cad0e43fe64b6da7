"""The TransformerConfig's counting helpers: the parameters and matmul weights of each part
(attention or another mixer, FFN or MoE, norms) from the config's fields alone. Mixed into
the config (models/transformer/config.py), whose public facts — `param_count`,
`kv_bytes_per_token`, `flops_per_token` — add these up."""

from __future__ import annotations


class ConfigCounting:
    """Methods only: every field they read is the TransformerConfig's."""

    def _linear(self, d_in: int, d_out: int, bias: bool | None = None) -> int:
        return d_in * d_out + (d_out if (self.bias if bias is None else bias) else 0)

    def _norm_params(self, n: int) -> int:
        return n * (2 if self.norm == "layernorm" and self.bias else 1)

    def _norms_per_block(self) -> int:
        sublayers = 3 if self.cross_attention else 2
        return sublayers * (2 if self.norm_placement == "sandwich" else 1)

    def _qk_norm_params(self) -> int:
        return 2 * self._norm_params(self.d_head) if self.qk_norm else 0

    def _attn_params(self, owns_kv: bool) -> int:
        d, H, dh = self.d_model, self.n_heads, self.d_head
        if self.mixer != "softmax":
            return self._mixer_params()
        out = self._linear(H * dh, d)
        if self.attention == "mha":
            q = self._linear(d, H * dh)
            kv = self._linear(d, 2 * self.n_kv_heads * dh) if owns_kv else 0
            return q + kv + out + self._qk_norm_params()
        dq = dh + self.d_rope  # per-head query: the part matched with the latent + RoPE part
        if self.d_cq:
            q = self._linear(d, self.d_cq) + self._norm_params(self.d_cq)
            q += self._linear(self.d_cq, H * dq)
        else:
            q = self._linear(d, H * dq)
        kv = 0
        if owns_kv:
            kv = self._linear(d, self.d_c + self.d_rope) + self._norm_params(self.d_c)
            kv += self._linear(self.d_c, 2 * H * dh)  # W_uk and W_uv
        return q + kv + out

    def _swiglu(self, width: int) -> int:
        return 2 * self._linear(self.d_model, width) + self._linear(width, self.d_model)

    def _ffn_params(self, layer: int) -> int:
        d = self.d_model
        if self.ffn in ("relu", "gelu"):
            return self._linear(d, self.d_ff) + self._linear(self.d_ff, d)
        if self.is_dense_ffn(layer):
            return self._swiglu(self.d_ff)
        experts = self.n_experts + (1 if self.shared_expert else 0)
        return d * self.n_experts + experts * self._swiglu(self.expert_ffn)  # router: no bias

    def _mixer_params(self) -> int:
        d, H, dh, Dn = self.d_model, self.n_heads, self.d_head, self.d_inner
        if self.mixer == "ssm":  # in_proj (u, gate), out; A_log, B, C [Dn, N]; log_dt, D
            return self._linear(d, 2 * Dn) + self._linear(Dn, d) + 3 * Dn * self.d_state + 2 * Dn
        beta = self._linear(d, H) if self.mixer == "delta" else 0  # write strength per head
        return self._linear(d, 3 * H * dh) + self._linear(H * dh, d) + beta

    def _state_flops(self) -> int:
        """One token's recurrent step, multiply-adds × 2: linear S += k vᵀ, z += k, qᵀS,
        qᵀz; delta kᵀS, the write, qᵀS; SSM Ā⊙h, B̄x, C·h per channel and state."""
        H, dh = self.n_heads, self.d_head
        macs = {
            "linear": H * (2 * dh * dh + 2 * dh),
            "delta": H * 3 * dh * dh,
            "ssm": 3 * self.d_inner * self.d_state,
        }[self.mixer]
        return 2 * macs

    def _attn_matmul_weights(self, owns_kv: bool) -> int:
        d, H, dh = self.d_model, self.n_heads, self.d_head
        if self.mixer == "ssm":
            return d * 2 * self.d_inner + self.d_inner * d
        if self.mixer != "softmax":
            return 4 * d * H * dh + (d * H if self.mixer == "delta" else 0)
        if self.attention == "mha":
            kv = d * 2 * self.n_kv_heads * dh if owns_kv else 0
            return 2 * d * H * dh + kv
        dq = dh + self.d_rope
        q = d * self.d_cq + self.d_cq * H * dq if self.d_cq else d * H * dq
        kv = d * (self.d_c + self.d_rope) + self.d_c * 2 * H * dh if owns_kv else 0
        return q + kv + H * dh * d

    def _ffn_matmul_weights(self, layer: int) -> int:
        d = self.d_model
        if self.ffn in ("relu", "gelu"):
            return 2 * d * self.d_ff
        if self.is_dense_ffn(layer):
            return 3 * d * self.d_ff
        experts = self.top_k + (1 if self.shared_expert else 0)
        return d * self.n_experts + experts * 3 * d * self.expert_ffn
