"""Named hook points: capture intermediate tensors by name, at no cost when not asked for.

A HookPoint is an identity module. `name_hooks(model)` names every hook from the module
tree (``blocks.0.attn.hook_pattern``), so a name never needs translating. Inside
``with capture(model, names) as store:`` each forward pass stores a detached copy of the
requested tensors in ``store``; outside it, a hook point is a plain function call.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from fnmatch import fnmatchcase

from torch import Tensor, nn


class _Capture:
    """The active request: which names, and where their tensors go."""

    def __init__(self, patterns: tuple[str, ...], store: dict[str, Tensor]):
        self.patterns = patterns
        self.store = store
        self._cache: dict[str, bool] = {}

    def wants(self, name: str) -> bool:
        hit = self._cache.get(name)
        if hit is None:
            hit = any(p == "*" or p == name or fnmatchcase(name, p) for p in self.patterns)
            self._cache[name] = hit
        return hit


class HookPoint(nn.Module):
    """Identity module whose input can be captured by name."""

    def __init__(self) -> None:
        super().__init__()
        self.name = ""
        self._capture: _Capture | None = None

    def forward(self, x: Tensor) -> Tensor:
        cap = self._capture
        if cap is not None and cap.wants(self.name):
            cap.store[self.name] = x.detach()
        return x


def name_hooks(model: nn.Module) -> None:
    """Name every HookPoint after its path in the module tree."""
    for name, module in model.named_modules():
        if isinstance(module, HookPoint):
            module.name = name


def is_capturing(hook: HookPoint) -> bool:
    """True when the active capture asks for this hook (so a model can compute it explicitly)."""
    cap = hook._capture
    return cap is not None and cap.wants(hook.name)


@contextmanager
def capture(model: nn.Module, names: Iterable[str] | str = "*") -> Iterator[dict[str, Tensor]]:
    """Collect detached tensors of the named hook points during forward passes in the block.

    ``names`` are exact names, fnmatch patterns (``blocks.*.attn.hook_pattern``) or "*".
    Hooks that were never named (no ``name_hooks`` call) are named here.
    """
    patterns = (names,) if isinstance(names, str) else tuple(names)
    hooks = [m for m in model.modules() if isinstance(m, HookPoint)]
    if any(not h.name for h in hooks):
        name_hooks(model)
    store: dict[str, Tensor] = {}
    cap = _Capture(patterns, store)
    for h in hooks:
        h._capture = cap
    try:
        yield store
    finally:
        for h in hooks:
            h._capture = None
