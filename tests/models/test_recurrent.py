"""models/recurrent.py: the hand-written cells equal torch's modules, count their parameters
from the config, expose their gates, and keep the per-step states backprop goes through."""

import pytest
import torch
from torch import nn

from models.hooks import capture
from models.recurrent import Recurrent, RecurrentConfig

B, T, D, H = 3, 7, 5, 6


def copied(cfg: RecurrentConfig) -> tuple[Recurrent, nn.Module]:
    """Our layer with a torch module's weights copied in (x·W convention: the transposes)."""
    torch.manual_seed(0)
    if cfg.kind == "rnn":
        ref: nn.Module = nn.RNN(D, H, batch_first=True, nonlinearity=cfg.activation)
    elif cfg.kind == "gru":
        ref = nn.GRU(D, H, batch_first=True)
    else:
        ref = nn.LSTM(D, H, batch_first=True)
    ours = Recurrent(cfg)
    with torch.no_grad():
        ours.W_xh.copy_(ref.weight_ih_l0.T)
        ours.W_hh.copy_(ref.weight_hh_l0.T)
        if cfg.kind == "rnn":
            ours.b.copy_(ref.bias_ih_l0 + ref.bias_hh_l0)  # torch's two biases only ever add
        else:
            ours.b_xh.copy_(ref.bias_ih_l0)
            ours.b_hh.copy_(ref.bias_hh_l0)
    return ours, ref


@pytest.mark.parametrize(
    "cfg",
    [
        RecurrentConfig("rnn", D, H, activation="tanh"),
        RecurrentConfig("rnn", D, H, activation="relu"),
        RecurrentConfig("gru", D, H),
        RecurrentConfig("lstm", D, H),
    ],
    ids=["rnn-tanh", "rnn-relu", "gru", "lstm"],
)
def test_equals_torch_module(cfg):
    ours, ref = copied(cfg)
    x = torch.randn(B, T, D, generator=torch.Generator().manual_seed(1))
    out, final = ours(x)
    ref_out, ref_final = ref(x)
    assert out.shape == (B, T, H)
    torch.testing.assert_close(out, ref_out, atol=1e-6, rtol=1e-5)
    if cfg.kind == "lstm":
        torch.testing.assert_close(final[0], ref_final[0][0], atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(final[1], ref_final[1][0], atol=1e-6, rtol=1e-5)
    else:
        torch.testing.assert_close(final, ref_final[0], atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
def test_given_state_equals_torch(kind):
    ours, ref = copied(RecurrentConfig(kind, D, H))
    g = torch.Generator().manual_seed(2)
    x = torch.randn(B, T, D, generator=g)
    h0 = torch.randn(B, H, generator=g)
    c0 = torch.randn(B, H, generator=g)
    state = (h0, c0) if kind == "lstm" else h0
    ref_state = (h0[None], c0[None]) if kind == "lstm" else h0[None]
    torch.testing.assert_close(ours(x, state)[0], ref(x, ref_state)[0], atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
@pytest.mark.parametrize("bias", [True, False])
def test_param_count_from_config(kind, bias):
    cfg = RecurrentConfig(kind, D, H, bias=bias)
    model = Recurrent(cfg)
    assert cfg.param_count() == sum(p.numel() for p in model.parameters())
    if bias and kind != "rnn":  # the same count as torch's own module
        ref = (nn.GRU if kind == "gru" else nn.LSTM)(D, H)
        assert cfg.param_count() == sum(p.numel() for p in ref.parameters())


def test_whh_scale_multiplies_the_initial_recurrent_matrix():
    torch.manual_seed(3)
    a = Recurrent(RecurrentConfig("rnn", D, H))
    torch.manual_seed(3)
    b = Recurrent(RecurrentConfig("rnn", D, H, whh_scale=2.5))
    torch.testing.assert_close(b.W_hh, 2.5 * a.W_hh)
    torch.testing.assert_close(b.W_xh, a.W_xh)


@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_keep_bias_shifts_only_the_keeping_gate(kind):
    torch.manual_seed(5)
    a = Recurrent(RecurrentConfig(kind, D, H))
    torch.manual_seed(5)
    b = Recurrent(RecurrentConfig(kind, D, H, keep_bias=3.0))
    shift = torch.zeros_like(a.b_xh)
    shift[H : 2 * H] = 3.0
    torch.testing.assert_close(b.b_xh, a.b_xh + shift)
    x = torch.randn(B, T, D)
    name = "hook_forget_gate" if kind == "lstm" else "hook_update_gate"
    with capture(b, name) as store:
        b(x)
    assert store[name].mean() > 0.9  # σ(3 ± small) ≈ 0.95: the cell starts out keeping


def test_sigmoid_rnn_state_is_the_formula():
    cfg = RecurrentConfig("rnn", D, H, activation="sigmoid")
    m = Recurrent(cfg)
    x = torch.randn(B, 2, D)
    out, _ = m(x)
    h1 = torch.sigmoid(x[:, 0] @ m.W_xh + m.b)
    h2 = torch.sigmoid(x[:, 1] @ m.W_xh + h1 @ m.W_hh + m.b)
    torch.testing.assert_close(out[:, 1], h2)


HOOKS = {
    "rnn": ["hook_hidden"],
    "gru": ["hook_hidden", "hook_update_gate", "hook_reset_gate"],
    "lstm": ["hook_hidden", "hook_input_gate", "hook_forget_gate", "hook_output_gate", "hook_cell"],
}


@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
def test_hooks_capture_every_step(kind):
    model = Recurrent(RecurrentConfig(kind, D, H))
    x = torch.randn(B, T, D)
    with capture(model, "*") as store:
        out, _ = model(x)
    assert sorted(store) == sorted(HOOKS[kind])
    for name in HOOKS[kind]:
        assert store[name].shape == (B, T, H), name
    torch.testing.assert_close(store["hook_hidden"], out.detach())
    if kind == "lstm":  # the gates are the ones the state was made of: c_t = f c + i g
        f, i, c = store["hook_forget_gate"], store["hook_input_gate"], store["hook_cell"]
        assert ((f > 0) & (f < 1)).all() and ((i > 0) & (i < 1)).all()
        o = store["hook_output_gate"]
        torch.testing.assert_close(out.detach(), o * torch.tanh(c))
    if kind == "gru":  # h_t = (1 − z) n + z h_{t-1}: with z → 1 nothing would change
        z = store["hook_update_gate"]
        assert ((z > 0) & (z < 1)).all()


def test_gru_update_gate_is_what_keeps_the_state():
    """z = 1 keeps h: push the update gate's bias up and the state barely moves."""
    model = Recurrent(RecurrentConfig("gru", D, H))
    with torch.no_grad():
        model.b_xh[H : 2 * H] = 30.0  # z's slice (torch's order r, z, n)
    h0 = torch.randn(B, H)
    out, _ = model(torch.randn(B, T, D), h0)
    torch.testing.assert_close(out[:, -1], h0, atol=1e-6, rtol=0)


def test_no_capture_no_gate_tensors():
    model = Recurrent(RecurrentConfig("lstm", D, H))
    with capture(model, "hook_hidden") as store:
        model(torch.randn(B, T, D))
    assert list(store) == ["hook_hidden"]


@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
def test_kept_steps_give_the_gradient_per_time_step(kind):
    """The kept h_t are the graph's tensors: their .grad after backward is dL/dh_t, and a loss
    on the last output only reaches earlier steps through the recurrence (chain rule checked
    one step back against W_hh for the plain RNN)."""
    torch.manual_seed(4)
    model = Recurrent(RecurrentConfig(kind, D, H))
    x = torch.randn(B, T, D)
    out, _ = model(x, keep_steps=True)
    assert len(model.steps) == T
    for h in model.steps:
        h.retain_grad()
    out[:, -1].pow(2).sum().backward()
    grads = [h.grad for h in model.steps]
    assert all(g is not None for g in grads)
    torch.testing.assert_close(grads[-1], 2 * out[:, -1].detach())
    assert all(g.abs().sum() > 0 for g in grads[:-1])
    if kind == "rnn":  # dL/dh_{T-1} = (dL/dh_T ⊙ tanh'(·)) W_hhᵀ
        hT = out[:, -1].detach()
        expect = (grads[-1] * (1 - hT**2)) @ model.W_hh.detach().T
        torch.testing.assert_close(grads[-2], expect)
    out2, _ = model(x)  # off by default: nothing kept
    assert model.steps == []
    torch.testing.assert_close(out2, out.detach())
