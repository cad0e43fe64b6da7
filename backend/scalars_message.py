"""The scalars a connection is sent as text: one step's `scalars` or many steps' `history`."""

from __future__ import annotations

import json
from collections import OrderedDict

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


class ScalarsTexts:
    """A session's scalars messages, each made once for every connection that is at the same
    place: 1,000 viewers in step are sent one step's `scalars` text, encoded once, not 1,000
    times (the texts are kept for the newest few ranges)."""

    KEEP = 16

    def __init__(self) -> None:
        # key -> (text, the first and last rows: held, so their ids stay theirs)
        self._texts: OrderedDict[tuple, tuple[str, dict, dict]] = OrderedDict()

    def text(self, steps: list[int], values: list[dict[str, float]], run: int) -> str:
        # The rows are in the key by identity: a run's rows never change, a replaced row is a
        # new dict (and the old one, held here, cannot lend it its id).
        key = (run, steps[0], steps[-1], len(steps), id(values[0]), id(values[-1]))
        hit = self._texts.get(key)
        if hit is None:
            hit = self._texts[key] = (scalars_message(steps, values, run), values[0], values[-1])
            while len(self._texts) > self.KEEP:
                self._texts.popitem(last=False)
        return hit[0]
