"""View-state keys: what a class follows of the driver's view, declared per lab.

Every lab has the generic keys (presenter mode, blank screen, the step scrubbed to, the
item hovered); a lab adds its own in `Lab.view_keys` (gpt: layer, head). A `view` message
is checked against them with the session's params: an unknown key or a value out of range
is refused as `bad_message` naming `view.state.<key>`.

A key's declaration: {"type": "int" | "float" | "bool" | "enum", "min"?, "max"? (numbers),
"below"? (int: a param's name; the value must be below that param's value, e.g. a layer
below n_layers), "values"? (enum: the allowed strings)}.
"""

from __future__ import annotations

import math
import re
from typing import Any

GENERIC: dict[str, dict[str, Any]] = {
    "present": {"type": "bool"},  # presenter mode
    "blank": {"type": "bool"},  # the projector blanked
    "scrub": {"type": "int", "min": -1, "max": 2**31 - 1},  # the step looked at (-1: live)
    "hover": {"type": "int", "min": -1, "max": 4096},  # the item hovered (-1: none)
    "low": {"type": "bool"},  # low bandwidth: the class subscribes at quality low (streams.md)
    # The lesson the driver is taking and its step (backend/lessons.py): a class follows it.
    "lesson": {"type": "id"},
    "lesson_step": {"type": "int", "min": 0, "max": 59},
}
TYPES = ("int", "float", "bool", "enum", "id")
ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")  # a lesson's id


def keys_of(lab_cls) -> dict[str, dict[str, Any]]:
    """The keys a lab's `view` may carry: the generic ones, then its own (which may narrow)."""
    return {**GENERIC, **lab_cls.view_keys}


def check_declaration(name: str, spec: dict[str, Any], params_fields: set[str]) -> None:
    """A lab's declaration is well formed (a test runs this on every lab)."""
    kind = spec.get("type")
    assert kind in TYPES, f"{name}: type {kind!r} is not one of {TYPES}"
    allowed = {"type", "min", "max", "below"} if kind in ("int", "float") else {"type"}
    if kind == "enum":
        allowed = {"type", "values"}
        values = spec.get("values")
        assert values and all(isinstance(v, str) for v in values), f"{name}: enum needs values"
    assert set(spec) <= allowed, f"{name}: unknown fields {set(spec) - allowed}"
    if "below" in spec:
        assert kind == "int" and spec["below"] in params_fields, f"{name}: below {spec['below']}"


def check_state(state: dict[str, Any], lab_cls, params) -> dict[str, Any]:
    """The view state checked (None clears a key: the enlarged map closed), or SessionError
    naming the first bad key."""
    keys = keys_of(lab_cls)
    out: dict[str, Any] = {}
    for name, value in state.items():
        spec = keys.get(name)
        if spec is None:
            known = ", ".join(keys)
            msg = f"{lab_cls.id} has no view key {name!r} (it has {known})"
            _refuse(name, value, msg, "err.view_key")
        if value is None:
            out[name] = None
            continue
        problem = _problem(spec, value, params)
        if problem:
            _refuse(name, value, problem, "err.view_value")
        out[name] = value
    return out


def _problem(spec: dict[str, Any], value: Any, params) -> str | None:
    kind = spec["type"]
    if kind == "bool":
        return None if isinstance(value, bool) else "must be true or false"
    if kind == "enum":
        return None if value in spec["values"] else f"must be one of {spec['values']}"
    if kind == "id":
        ok = isinstance(value, str) and ID.match(value)
        return None if ok else "must be an id (a-z, 0-9 and -)"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"must be a number ({kind})"
    if kind == "int" and not isinstance(value, int):
        return "must be a whole number"
    if not math.isfinite(value):
        return "must be finite"
    lo, hi = spec.get("min"), spec.get("max")
    if "below" in spec:
        limit = getattr(params, spec["below"]) - 1
        hi = limit if hi is None else min(hi, limit)
    if lo is not None and value < lo:
        return f"must be ≥ {lo}"
    if hi is not None and value > hi:
        return f"must be ≤ {hi}"
    return None


def _refuse(name: str, value: Any, problem: str, key: str) -> None:
    # Imported here: admission imports the labs, whose base imports this module.
    from backend.admission import SessionError

    field = f"view.state.{name}"
    raise SessionError(
        "bad_message", f"{field}: {problem}", field, key, {"key": name, "value": str(value)}
    )
