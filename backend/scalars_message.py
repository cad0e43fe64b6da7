"""The scalars a connection is sent as text: one step's `scalars` or many steps' `history`."""

from __future__ import annotations

import json

from backend import protocol, wire


def scalars_message(steps: list[int], values: list[dict[str, float]], run: int) -> str:
    """`scalars` (one step) or `history` (several), unvalidated: the hot path."""
    if len(steps) == 1:
        vals = {k: wire.json_number(v) for k, v in values[0].items()}
        msg = protocol.Scalars.model_construct(run=run, step=steps[0], values=vals)
        return json.dumps(protocol.dump_plain(msg))
    names: dict[str, None] = {}
    for v in values:
        names.update(dict.fromkeys(v))
    cols = {n: [wire.json_number(v[n]) if n in v else None for v in values] for n in names}
    msg = protocol.History.model_construct(run=run, steps=steps, values=cols)
    return json.dumps(protocol.dump_plain(msg))
