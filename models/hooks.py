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
from functools import lru_cache
from weakref import WeakKeyDictionary

from torch import Tensor, nn


@lru_cache(maxsize=8192)
def _wanted(patterns: tuple[str, ...], name: str) -> bool:
    """Does a request ask for this hook? Cached across captures: a lab asks the same names
    ~30 times a second, and matching every hook against every pattern each time cost a
    small model's picture a quarter of its time."""
    return any(p == "*" or p == name or fnmatchcase(name, p) for p in patterns)


class _Capture:
    """The active request: which names, and where their tensors go."""

    def __init__(self, patterns: tuple[str, ...], store: dict[str, Tensor]):
        self.patterns = patterns
        self.store = store

    def wants(self, name: str) -> bool:
        return _wanted(self.patterns, name)


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

    # Called directly, not through nn.Module's call machinery (torch's own module hooks
    # are not used on hook points): ~3 µs saved on each of a GPT's ~27 hooks per forward.
    __call__ = forward


def name_hooks(model: nn.Module) -> None:
    """Name every HookPoint after its path in the module tree."""
    for name, module in model.named_modules():
        if isinstance(module, HookPoint):
            module.name = name


def is_capturing(hook: HookPoint) -> bool:
    """True when the active capture asks for this hook (so a model can compute it explicitly)."""
    cap = hook._capture
    return cap is not None and cap.wants(hook.name)


_HOOK_POINTS: WeakKeyDictionary[nn.Module, list[HookPoint]] = WeakKeyDictionary()


def _hook_points(model: nn.Module) -> list[HookPoint]:
    """The model's hook points, found once: a frame is captured ~30 times a second, and
    walking the module tree each time cost a small model a fifth of its capture."""
    hooks = _HOOK_POINTS.get(model)
    if hooks is None:
        hooks = [m for m in model.modules() if isinstance(m, HookPoint)]
        if any(not h.name for h in hooks):
            name_hooks(model)
        _HOOK_POINTS[model] = hooks
    return hooks


def _attach(hooks: list[HookPoint], cap: _Capture | None) -> None:
    for h in hooks:  # a plain attribute: skip nn.Module.__setattr__'s parameter checks
        h.__dict__["_capture"] = cap


@contextmanager
def capture(model: nn.Module, names: Iterable[str] | str = "*") -> Iterator[dict[str, Tensor]]:
    """Collect detached tensors of the named hook points during forward passes in the block.

    ``names`` are exact names, fnmatch patterns (``blocks.*.attn.hook_pattern``) or "*".
    Hooks that were never named (no ``name_hooks`` call) are named here. A model's hook
    points are looked up once, so add no HookPoint to a model after its first capture.
    """
    patterns = (names,) if isinstance(names, str) else tuple(names)
    hooks = _hook_points(model)
    store: dict[str, Tensor] = {}
    _attach(hooks, _Capture(patterns, store))
    try:
        yield store
    finally:
        _attach(hooks, None)
