"""The fuzz scenario's hostile messages (bench/fuzz.py, part 2): seeded, so a run repeats.

Garbage text, random JSON, near-valid protocol messages with a field wrong or extreme,
truncated JSON, binary frames, deep nesting, NaN literals and strings up to 10 MB.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any

from bench.fuzz_client import LAB

VALID: list[dict[str, Any]] = [
    {"type": "control", "action": "step", "count": 2},
    {"type": "control", "action": "play", "speed": 50},
    {"type": "control", "action": "pause"},
    {"type": "control", "action": "reset"},
    {"type": "set", "params": {"lr": 0.05}},
    {"type": "set", "params": {"features": "zscore", "batch": "mini"}},
    {"type": "seek", "step": 1},
    {"type": "infer", "input": {"x": 1.5}},
    {"type": "subscribe", "tensors": ["grad"], "max_fps": 10},
    {"type": "subscribe", "tensors": "*"},
    {"type": "view", "state": {"hover": 2}},
    {"type": "share"},
    {"type": "open", "lab": LAB},
    {"type": "join", "session": "abc", "token": "def"},
]
EXTREMES: list[Any] = [0, -1, 1e308, -1e308, 2**64, 10**400, math.nan, math.inf, -math.inf]
EXTREMES += ["", "x" * 300, None, True, [], {}, [[[[]]]]]


def _json_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([rng.randint(-(10**6), 10**6), rng.randint(-(2**70), 2**70)])
    if kind == 3:
        return rng.choice([rng.uniform(-1e6, 1e6), math.nan, math.inf, -math.inf, 1e308])
    if kind in (4, 5):
        return "".join(chr(rng.randint(1, 0x2FFF)) for _ in range(rng.randint(0, 20)))
    if kind == 6:
        return [_json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {str(_json_value(rng, 3)): _json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _char(rng: random.Random) -> str:
    """Any character but a lone surrogate (which UTF-8 cannot carry)."""
    return chr(rng.randint(1, 0xD7FF) if rng.random() < 0.9 else rng.randint(0xE000, 0x10FFFF))


def _near_valid(rng: random.Random) -> dict[str, Any]:
    msg = json.loads(json.dumps(rng.choice(VALID)))
    for _ in range(rng.randint(0, 2)):
        key = rng.choice(list(msg) or ["type"])
        how = rng.randrange(6)
        if how == 0:
            msg[key] = _json_value(rng)
        elif how == 1:
            inner = msg.get(key)
            if isinstance(inner, dict) and inner:
                inner[rng.choice(list(inner))] = rng.choice(EXTREMES)
            else:
                msg[key] = rng.choice(EXTREMES)
        elif how == 2:
            msg[str(_json_value(rng, 3))] = _json_value(rng)
        elif how == 3:
            msg.pop(key, None)
        elif how == 4:
            msg["type"] = rng.choice([*(m["type"] for m in VALID), "OPEN", 7, "fork "])
        else:
            depth = rng.randint(10, 900)
            msg[key] = json.loads("[" * depth + "]" * depth)
    return msg


def message(rng: random.Random, i: int) -> str | bytes:
    """The i-th hostile message (text or binary)."""
    if i % 2000 == 500:
        return json.dumps({"type": "save", "name": "x" * 10_000_000})  # 10 MB
    if i % 500 == 300:
        return "x" * 1_000_000
    kind = rng.randrange(10)
    if kind < 4:
        return json.dumps(_near_valid(rng))
    if kind == 4:
        return json.dumps(_json_value(rng))
    if kind == 5:
        return json.dumps(_near_valid(rng))[: rng.randint(0, 40)]  # truncated
    if kind == 6:
        return rng.randbytes(rng.randint(0, 256))
    if kind == 7:
        return "".join(_char(rng) for _ in range(rng.randint(0, 200)))
    if kind == 8:
        n = rng.randint(1000, 30_000)
        return "[" * n + "]" * n
    return rng.choice(
        [
            '{"type":"control","action":"play","speed":NaN}',
            '{"type":"set","params":{"lr":-Infinity}}',
            '{"type":"seek","step":' + "9" * 5000 + "}",
            "null",
            "",
            '"open"',
        ]
    )
