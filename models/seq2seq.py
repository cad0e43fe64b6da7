"""A small GRU encoder-decoder, with one context vector or with Bahdanau attention.

The encoder reads the source both ways (a bidirectional `nn.GRU`). Without attention the decoder sees
only the encoder's last states: it starts from them and reads them again at every step (the
single context vector, Cho et al. 2014). With attention (Bahdanau et al. 2015, additive)
every decoder step scores every encoder state, e_ij = vᵀ tanh(W s_{i-1} + U h_j), and reads
their softmax-weighted sum instead. Both arms are otherwise the same module, so a lab that
builds one of each compares exactly the bottleneck.

Training is teacher forced (`forward`: the decoder reads the true previous token); `greedy`
runs free (it reads its own previous prediction). The alignment [B, T_dec, T_enc] passes
through `hook_alignment` in both (zeros for the context-vector model, which has none).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from models.hooks import HookPoint


@dataclass(frozen=True)
class Seq2SeqConfig:
    d_vocab: int  # source and target share one vocabulary (ids from models.data.seq2seq_tasks)
    d_emb: int = 32
    d_hidden: int = 64  # the context vector's size (two directions of d_hidden/2): even
    attention: bool = False  # False: one context vector; True: Bahdanau additive attention
    d_attn: int = 64  # width of the additive scorer's tanh layer
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2

    def __post_init__(self) -> None:
        if self.d_hidden % 2:
            raise ValueError(f"d_hidden splits into two directions: even, got {self.d_hidden}")

    def replace(self, **changes) -> Seq2SeqConfig:
        return type(self)(**{**self.__dict__, **changes})

    def param_count(self) -> int:
        """Parameters of `Seq2Seq(self)`, from the config (a test checks it against torch)."""
        V, E, H, A = self.d_vocab, self.d_emb, self.d_hidden, self.d_attn
        gru = lambda d_in, h: 3 * h * (d_in + h) + 2 * 3 * h  # noqa: E731  (W_ih, W_hh, biases)
        n = 2 * V * E  # source and target embeddings
        n += 2 * gru(E, H // 2)  # the encoder: two directions of H/2
        n += gru(E + H, H)  # the decoder cell reads [embedding; context]
        n += (2 * H + E) * V + V  # output layer over [state; context; embedding]
        if self.attention:
            n += H * A + (H * A + A) + A  # U (keys, no bias), W (query, bias), v
        return n


class Seq2Seq(nn.Module):
    def __init__(self, cfg: Seq2SeqConfig):
        super().__init__()
        self.cfg = cfg
        V, E, H, A = cfg.d_vocab, cfg.d_emb, cfg.d_hidden, cfg.d_attn
        self.embed_src = nn.Embedding(V, E, padding_idx=cfg.pad_id)
        # Bidirectional, as Bahdanau's: state j is centred on character j (a left-to-right
        # state has only read up to it, and attention learns to look one place late).
        self.encoder = nn.GRU(E, H // 2, batch_first=True, bidirectional=True)
        self.embed_tgt = nn.Embedding(V, E, padding_idx=cfg.pad_id)
        if cfg.attention:
            self.attn_keys = nn.Linear(H, A, bias=False)  # U h_j, computed once per source
            self.attn_query = nn.Linear(H, A)  # W s_{i-1}
            self.attn_v = nn.Linear(A, 1, bias=False)
        self.decoder = nn.GRUCell(E + H, H)
        self.out = nn.Linear(2 * H + E, V)
        self.hook_context = HookPoint()  # the encoder's last state [B, H]: the bottleneck
        self.hook_alignment = HookPoint()  # [B, T_dec, T_enc]

    # -- pieces ---------------------------------------------------------------------------
    def encode(self, src: Tensor, src_len: Tensor) -> tuple[Tensor, Tensor]:
        """Encoder states [B, T_enc, H] and the context vector [B, H]: both directions'
        last states (left to right after the last character, right to left after the
        first). Packed, so a short source never reads its padding (the backward direction
        would start in it)."""
        packed = pack_padded_sequence(
            self.embed_src(src), src_len.cpu(), batch_first=True, enforce_sorted=False
        )
        out, h_n = self.encoder(packed)  # h_n [2, B, H/2]: forward, backward
        states, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        last = torch.cat([h_n[0], h_n[1]], -1)  # [B, H]
        return states, self.hook_context(last)

    def _keys(self, states: Tensor) -> Tensor | None:
        return self.attn_keys(states) if self.cfg.attention else None  # [B, T_enc, A]

    def _step(
        self, emb: Tensor, s: Tensor, states: Tensor, keys: Tensor | None, pad: Tensor, ctx0: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        """One decoder step from the previous token's embedding `emb` [B, E] and state `s`
        [B, H]: (new state [B, H], context [B, H], alignment [B, T_enc])."""
        if keys is not None:
            scores = self.attn_v(torch.tanh(keys + self.attn_query(s)[:, None])).squeeze(-1)
            alpha = torch.softmax(scores.masked_fill(pad, float("-inf")), -1)  # [B, T_enc]
            context = torch.bmm(alpha[:, None], states)[:, 0]  # [B, H]
        else:
            alpha = torch.zeros(pad.shape, device=s.device)  # no alignment: one vector
            context = ctx0
        s = self.decoder(torch.cat([emb, context], -1), s)  # [B, H]
        return s, context, alpha

    # -- teacher forced -------------------------------------------------------------------
    def forward(self, src: Tensor, src_len: Tensor, tgt_in: Tensor) -> Tensor:
        """Logits [B, T_dec, V] with the true previous token fed at every step."""
        states, last = self.encode(src, src_len)
        keys, pad = self._keys(states), src == self.cfg.pad_id
        embs = self.embed_tgt(tgt_in)  # [B, T_dec, E]: every input is known up front
        s, feats, aligns = last, [], []
        for i in range(tgt_in.shape[1]):
            s, context, alpha = self._step(embs[:, i], s, states, keys, pad, last)
            feats.append(torch.cat([s, context, embs[:, i]], -1))
            aligns.append(alpha)
        self.hook_alignment(torch.stack(aligns, 1))  # [B, T_dec, T_enc]
        return self.out(torch.stack(feats, 1))  # [B, T_dec, V]: one matmul for every step

    # -- free running ---------------------------------------------------------------------
    @torch.no_grad()
    def greedy(self, src: Tensor, src_len: Tensor, steps: int) -> tuple[Tensor, Tensor]:
        """Free running for `steps` steps: each step reads the previous step's argmax.
        Returns the tokens [B, steps] and the alignment [B, steps, T_enc] (a caller cuts
        each row at its first EOS)."""
        states, last = self.encode(src, src_len)
        keys, pad = self._keys(states), src == self.cfg.pad_id
        tok = torch.full((len(src),), self.cfg.bos_id, dtype=torch.long, device=src.device)
        s, out, aligns = last, [], []
        for _ in range(steps):
            emb = self.embed_tgt(tok)  # [B, E]
            s, context, alpha = self._step(emb, s, states, keys, pad, last)
            tok = self.out(torch.cat([s, context, emb], -1)).argmax(-1)  # [B]: fed back next
            out.append(tok)
            aligns.append(alpha)
        align = self.hook_alignment(torch.stack(aligns, 1))  # [B, steps, T_enc]
        return torch.stack(out, 1), align


def loss_fn(logits: Tensor, tgt_out: Tensor, pad_id: int = 0) -> Tensor:
    """Mean cross-entropy over the real target tokens (EOS included, padding not)."""
    return F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=pad_id)


def cut_at_eos(tokens: list[int], eos_id: int) -> list[int]:
    """A free-running output up to (not including) its first EOS."""
    return tokens[: tokens.index(eos_id)] if eos_id in tokens else tokens
