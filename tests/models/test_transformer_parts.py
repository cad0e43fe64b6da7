"""The family's parts: parameter counts of every combination, MLA's absorbed form, RoPE
layouts, MoE routing and balancing, norm placements, gradient stages."""

import itertools
import math

import pytest
import torch
import torch.nn.functional as F

from models.hooks import capture
from models.mlp import MLP, MLPConfig, layer_grad_norms
from models.positional import interleaved_to_half
from models.stages import grad_stages, stage_grad_norms
from models.transformer import PRESETS, Transformer, TransformerConfig

BASE = dict(n_layers=2, d_model=16, n_heads=4, n_ctx=8, d_vocab=7)
ATTENTION = {
    "mha": {},
    "gqa": dict(n_kv_heads=2),
    "mqa": dict(n_kv_heads=1),
    "mla": dict(attention="mla", d_c=6, d_rope=2),
}
FFN = {
    "relu": dict(ffn="relu"),
    "gelu": dict(ffn="gelu"),
    "swiglu": dict(ffn="swiglu", d_ff=24),
    "moe": dict(ffn="moe", n_experts=3, top_k=2, expert_ffn=8),
    "moe-shared": dict(ffn="moe", n_experts=3, top_k=1, expert_ffn=8, shared_expert=True),
    "moe-dense-first": dict(ffn="moe", n_experts=3, top_k=2, expert_ffn=8, d_ff=24, dense_layers=1),
}
REST = list(
    itertools.product(
        ["none", "learned", "sinusoidal", "rope", "alibi"],
        ["layernorm", "rmsnorm"],
        ["pre", "post", "sandwich", "olmo2"],
    )
)


@pytest.mark.parametrize("kv_share", [1, 2])
@pytest.mark.parametrize("ffn", FFN)
@pytest.mark.parametrize("attention", ATTENTION)
def test_param_count_is_the_built_models_for_every_combination(attention, ffn, kv_share):
    # each case builds a third of the positional × norm × placement grid (every value of
    # each shows up in every case); the three thirds rotate over the cases
    offset = list(ATTENTION).index(attention) + list(FFN).index(ffn) + kv_share
    for i, (positional, norm, placement) in enumerate(REST):
        if i % 3 != offset % 3:
            continue
        flags = [(i >> b) & 1 == 1 for b in range(4)]  # tied, qk_norm, cross, bias: all mixes
        cfg = TransformerConfig(
            **BASE | ATTENTION[attention] | FFN[ffn],
            kv_share=kv_share,
            positional=positional,
            norm=norm,
            norm_placement=placement,
            tied_embeddings=flags[0],
            qk_norm=flags[1] and attention != "mla",
            cross_attention=flags[2],
            bias=flags[3],
            mla_rope_in_latent=attention == "mla" and positional == "rope" and flags[1],
        )
        model = Transformer(cfg)
        assert cfg.param_count() == sum(p.numel() for p in model.parameters()), cfg
        assert model.num_params() == cfg.param_count()


MIXERS = {
    "linear": dict(mixer="linear"),
    "delta": dict(mixer="delta"),
    "ssm": dict(mixer="ssm", d_state=3),
}
MIXER_REST = list(
    itertools.product(
        ["none", "learned", "sinusoidal"],
        ["layernorm", "rmsnorm"],
        ["pre", "post", "sandwich", "olmo2"],
    )
)


@pytest.mark.parametrize("ffn", FFN)
@pytest.mark.parametrize("mixer", MIXERS)
def test_param_count_is_the_built_models_for_every_mixer(mixer, ffn):
    # the recurrent mixers with every FFN, the positions they take, norms and placements
    # (half of that grid a case, alternating), tied or not, biases or not
    offset = list(MIXERS).index(mixer) + list(FFN).index(ffn)
    for i, (positional, norm, placement) in enumerate(MIXER_REST):
        if i % 2 != offset % 2:
            continue
        flags = [(i >> b) & 1 == 1 for b in range(2)]  # tied, bias: all mixes
        cfg = TransformerConfig(
            **BASE | MIXERS[mixer] | FFN[ffn],
            positional=positional,
            norm=norm,
            norm_placement=placement,
            tied_embeddings=flags[0],
            bias=flags[1],
        )
        model = Transformer(cfg)
        assert cfg.param_count() == sum(p.numel() for p in model.parameters()), cfg
        assert model.num_params() == cfg.param_count()


@pytest.mark.parametrize("mixer", MIXERS)
def test_recurrent_mixers_refuse_what_needs_every_key(mixer):
    refused = [
        dict(attention="mla", d_c=6, d_rope=2),
        dict(positional="rope"),
        dict(positional="alibi"),
        dict(kv_share=2),
        dict(cross_attention=True),
        dict(n_kv_heads=2),
        dict(qk_norm=True),
        dict(causal=False),
        dict(sparse="window", window=2),
    ]
    for extra in refused:
        with pytest.raises(ValueError):
            TransformerConfig(**BASE | MIXERS[mixer] | extra)


def test_qk_norm_bias_and_tying_are_counted():
    cfg = TransformerConfig(**BASE)
    assert cfg.replace(qk_norm=True).param_count() - cfg.param_count() == 2 * 2 * 2 * 4
    assert cfg.param_count() - cfg.replace(tied_embeddings=True).param_count() == 7 * 16
    m = Transformer(cfg.replace(tied_embeddings=True))
    assert m.unembed.weight is m.embed.weight


# -- MLA ---------------------------------------------------------------------------------
def unit_scale(model: torch.nn.Module) -> None:
    """Matrices of std 1/√fan_in and biases of 0.3 (norms stay 1): scores of order 1, so a
    disagreement would show."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2:
                p.normal_(0.0, p.shape[1] ** -0.5)
            elif name.endswith("bias"):
                p.normal_(0.0, 0.3)


def mla(seed=0, **kw) -> Transformer:
    torch.manual_seed(seed)
    cfg = dict(BASE, n_ctx=12, attention="mla", d_c=6, d_rope=4, positional="rope") | kw
    model = Transformer(TransformerConfig(**cfg)).double()
    unit_scale(model)
    return model


def test_mla_absorbed_scores_equal_explicit_with_decoupled_rope():
    x = torch.randn(2, 12, 16, dtype=torch.float64)
    for kw in (dict(), dict(d_cq=5), dict(positional="none", d_rope=0), dict(bias=False)):
        attn = mla(**kw).blocks[0].attn
        explicit, absorbed = attn.scores(x), attn.scores_absorbed(x)
        assert explicit.shape == (2, 4, 12, 12)  # [B, H, T, T]
        assert explicit.abs().mean() > 0.1  # scores of order 1
        assert (explicit - absorbed).abs().max() < 1e-6, kw
    attn32 = mla().float().blocks[0].attn
    x32 = x.float()
    assert (attn32.scores(x32) - attn32.scores_absorbed(x32)).abs().max() < 1e-5


def test_mla_absorbed_scores_disagree_with_rope_inside_the_latent():
    attn = mla(mla_rope_in_latent=True).blocks[0].attn
    x = torch.randn(2, 12, 16, dtype=torch.float64)
    gap = (attn.scores(x) - attn.scores_absorbed(x)).abs()
    assert gap.max() > 1e-2
    assert gap[..., 0, 0].max() < 1e-9  # at position 0 the rotations are the identity


def test_mla_explicit_scores_are_what_the_model_attends_with():
    model = mla()
    x = torch.randint(0, 7, (2, 10))
    with capture(model, ["blocks.0.hook_resid_pre", "blocks.0.attn.hook_attn_scores"]) as s:
        model(x)
    attn = model.blocks[0].attn
    assert torch.allclose(
        attn.scores(model.blocks[0].ln1(s["blocks.0.hook_resid_pre"])),
        s["blocks.0.attn.hook_attn_scores"],
    )


def test_mla_cache_holds_the_latent_and_the_rope_key_only():
    model = mla()
    cache = model.new_cache()
    model(torch.randint(0, 7, (3, 5)), cache)
    c, k_rope = cache.entries[0]
    assert c.shape == (3, 5, 6) and k_rope.shape == (3, 5, 4)  # [B, T, d_c], [B, T, d_rope]


# -- RoPE layouts ------------------------------------------------------------------------
def test_rope_layouts_agree_when_weights_are_permuted_and_break_when_mixed():
    torch.manual_seed(0)
    cfg = TransformerConfig(**BASE, positional="rope", rope_layout="interleaved")
    inter = Transformer(cfg).double()
    unit_scale(inter)
    half = Transformer(cfg.replace(rope_layout="rotate_half")).double()
    half.load_state_dict(inter.state_dict())  # the same weights: a layout mismatch
    x = torch.randint(0, 7, (2, 8))
    assert not torch.allclose(half(x), inter(x), atol=1e-3)
    perm = interleaved_to_half(4)  # per head of d_head 4
    rows = torch.cat([h * 4 + perm for h in range(4 + 2 * 4)])  # q heads, then k, v heads
    with torch.no_grad():
        for b_half, b_inter in zip(half.blocks, inter.blocks, strict=True):
            w, b = b_inter.attn.qkv.weight, b_inter.attn.qkv.bias
            b_half.attn.qkv.weight.copy_(w[rows])  # v's rows permuted too: harmless
            b_half.attn.qkv.bias.copy_(b[rows])
            b_half.attn.out.weight.copy_(
                b_inter.attn.out.weight[:, torch.cat([h * 4 + perm for h in range(4)])]
            )
    assert torch.allclose(half(x), inter(x), atol=1e-10)


# -- MoE ---------------------------------------------------------------------------------
def moe(**kw) -> Transformer:
    torch.manual_seed(0)
    cfg = TransformerConfig(**BASE | dict(ffn="moe", n_experts=4, top_k=2, expert_ffn=8) | kw)
    return Transformer(cfg).double()


def test_moe_routes_each_token_to_its_top_k_experts():
    model = moe(shared_expert=True)
    layer = model.blocks[0].mlp
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    with capture(model, "blocks.0.mlp.hook_router") as store:
        out = layer(x)
    probs = layer.router(x).softmax(-1)  # [B, T, E]
    assert torch.allclose(store["blocks.0.mlp.hook_router"], probs)
    want = layer.shared(x)
    for b, t in itertools.product(range(2), range(5)):
        w, idx = probs[b, t].topk(2)
        for wi, e in zip(w / w.sum(), idx, strict=True):
            want[b, t] += wi * layer.experts[int(e)](x[b, t])
    assert torch.allclose(out, want, atol=1e-12)
    assert math.isclose(float(layer.load.sum()), 1.0)


def test_moe_balancing_loss_is_one_when_uniform_and_grows_with_imbalance():
    model = moe()
    with torch.no_grad():
        for block in model.blocks:
            block.mlp.router.weight.zero_()  # uniform router probabilities
    x = torch.randint(0, 7, (4, 8))
    model(x)
    assert [float(b.mlp.balance.detach()) for b in model.blocks] == pytest.approx([1.0, 1.0])
    assert float(model.aux_loss().detach()) == pytest.approx(0.01 * 2)
    with torch.no_grad():
        for block in model.blocks:
            block.mlp.router.weight[0].fill_(5.0)  # expert 0 wins almost every token
            block.mlp.router.weight[1].fill_(4.0)
    layer = model.blocks[0].mlp
    layer(torch.ones(2, 5, 16, dtype=torch.float64))  # experts 0 and 1 take every token
    assert layer.load.tolist() == [0.5, 0.5, 0.0, 0.0]
    probs = torch.tensor([80.0, 64.0, 0.0, 0.0]).softmax(0)
    assert float(layer.balance.detach()) == pytest.approx(4 * 0.5 * float(probs[:2].sum()))
    model(x)
    model.aux_loss().backward()  # the loss trains the router
    assert model.blocks[0].mlp.router.weight.grad.abs().sum() > 0
    dense = Transformer(TransformerConfig(**BASE))
    dense(x)
    assert float(dense.aux_loss()) == 0.0


# -- norms and placements ------------------------------------------------------------------
@pytest.mark.parametrize("placement", ["pre", "post", "sandwich", "olmo2"])
def test_norm_placements_normalise_where_they_say(placement):
    torch.manual_seed(0)
    cfg = TransformerConfig(**BASE, norm="rmsnorm", norm_eps=1e-12, norm_placement=placement)
    model = Transformer(cfg)  # (an eps that small: even tiny branch outputs are scaled to 1)
    with capture(model, "blocks.*.hook_resid_*") as s:
        model(torch.randint(0, 7, (2, 6)))
    rms = s["blocks.0.hook_resid_post"].pow(2).mean(-1).sqrt()
    assert torch.allclose(rms, torch.ones_like(rms), atol=1e-3) == (placement == "post")
    assert (placement == "post") != hasattr(model.ln_final, "weight")  # no final norm after post
    branch = s["blocks.0.hook_resid_mid"] - s["blocks.0.hook_resid_pre"]  # what attention added
    rms = branch.pow(2).mean(-1).sqrt()
    normed_branch = placement in ("sandwich", "olmo2")  # the branch output is normalised
    assert torch.allclose(rms, torch.ones_like(rms), atol=1e-3) == normed_branch


def test_rmsnorm_and_layernorm():
    x = torch.tensor([[0.12, 0.45, 0.78]])
    ln = Transformer(TransformerConfig(**BASE)).blocks[0].ln1
    assert torch.allclose(F.layer_norm(x, (3,)), torch.tensor([[-1.2247, 0.0, 1.2247]]), atol=1e-4)
    rms = Transformer(TransformerConfig(**BASE, norm="rmsnorm", bias=False)).blocks[0].ln1
    assert isinstance(rms, torch.nn.RMSNorm) and isinstance(ln, torch.nn.LayerNorm)


# -- stages ------------------------------------------------------------------------------------
def test_grad_stages_name_every_family_and_cover_every_parameter_once():
    for cfg in (TransformerConfig(**BASE), TransformerConfig(**BASE, tied_embeddings=True)):
        model = Transformer(cfg)
        stages = grad_stages(model)
        assert [label for label, _ in stages] == ["embed", "blocks.0", "blocks.1", "unembed"]
        ids = [id(p) for _, ps in stages for p in ps]
        assert len(ids) == len(set(ids)) == len(list(model.parameters()))
    mlp = MLP(MLPConfig(d_in=2, hidden=(3, 4)))
    assert [label for label, _ in grad_stages(mlp)] == ["layers.0", "layers.1", "out"]
    other = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU(), torch.nn.Linear(2, 1))
    assert [label for label, _ in grad_stages(other)] == ["0", "2"]


def test_stage_grad_norms_are_each_stages_norm():
    torch.manual_seed(0)
    mlp = MLP(MLPConfig(d_in=2, hidden=(3,)))
    stages = grad_stages(mlp)
    assert stage_grad_norms(stages) == [0.0, 0.0]  # no gradients yet
    mlp(torch.randn(5, 2)).sum().backward()
    want = [torch.cat([p.grad.flatten() for p in ps]).norm().item() for _, ps in stages]
    assert stage_grad_norms(stages) == pytest.approx(want, rel=1e-6)
    norms, labels = layer_grad_norms(mlp)
    assert labels == ["layers.0", "out"] and norms.tolist() == pytest.approx(want, rel=1e-6)


def test_presets_build_when_small():
    model = Transformer(PRESETS["gpt-nano"])
    assert model.num_params() == PRESETS["gpt-nano"].param_count() == 104_192


def test_qk_norm_normalises_every_heads_q_and_k_before_rope():
    torch.manual_seed(0)
    cfg = TransformerConfig(**BASE, qk_norm=True, norm="rmsnorm", norm_eps=1e-12, positional="rope")
    model = Transformer(cfg)
    with capture(model, "blocks.0.attn.hook_*") as s:
        model(torch.randint(0, 7, (2, 6)))
    for name in ("hook_q", "hook_k", "hook_rot_q", "hook_rot_k"):  # a rotation keeps the norm
        rms = s[f"blocks.0.attn.{name}"].pow(2).mean(-1).sqrt()  # [B, H, T]
        assert torch.allclose(rms, torch.ones_like(rms), atol=1e-4), name
