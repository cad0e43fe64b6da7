import torch
from torch import nn

from models.hooks import HookPoint, capture, is_capturing, name_hooks


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.hook_a = HookPoint()
        self.blocks = nn.ModuleList([nn.ModuleDict({"hook_out": HookPoint()}) for _ in range(2)])
        self.seen_capturing = []

    def forward(self, x):
        x = self.hook_a(self.a(x))
        for b in self.blocks:
            self.seen_capturing.append(is_capturing(b["hook_out"]))
            x = b["hook_out"](x * 2)
        return x


def test_hooks_are_named_from_the_module_tree():
    m = Tiny()
    name_hooks(m)
    names = sorted(h.name for h in m.modules() if isinstance(h, HookPoint))
    assert names == ["blocks.0.hook_out", "blocks.1.hook_out", "hook_a"]


def test_capture_collects_exactly_the_named_tensors():
    m = Tiny()
    x = torch.randn(4, 3)
    with capture(m, ["hook_a", "blocks.1.hook_out"]) as store:
        y = m(x)
    assert sorted(store) == ["blocks.1.hook_out", "hook_a"]
    assert torch.equal(store["blocks.1.hook_out"], y.detach())  # the same tensor, kept
    assert not store["hook_a"].requires_grad


def test_capture_patterns_and_star():
    m = Tiny()
    with capture(m, "blocks.*.hook_out") as store:
        m(torch.randn(1, 3))
    assert sorted(store) == ["blocks.0.hook_out", "blocks.1.hook_out"]
    with capture(m, "*") as store:
        m(torch.randn(1, 3))
    assert len(store) == 3


def test_uncaptured_hooks_store_nothing_and_report_not_capturing():
    m = Tiny()
    with capture(m, ["hook_a"]) as store:
        m(torch.randn(1, 3))
    assert m.seen_capturing == [False, False]
    m(torch.randn(1, 3))  # outside a capture: nothing stored anywhere
    assert list(store) == ["hook_a"]
    assert all(h._capture is None for h in m.modules() if isinstance(h, HookPoint))


def test_hook_point_is_identity_for_autograd():
    m = Tiny()
    x = torch.randn(2, 3, requires_grad=True)
    with capture(m):
        m(x).sum().backward()
    assert x.grad is not None
