"""What each connection is sent: a frame cut to its subscription, encoded once per key.

A `subscribe` names tensors, one layer and/or one head, and a quality (docs/protocol.md
"Subscriptions", docs/streams.md). The session publishes one full frame; each connection's
sender asks `cut` for its slice. The cut of a frame for a given key is made once and its
bytes shared by every connection with that key: 1,000 phones on layer 2 head 3 cost one cut.
The class figure (bytes/s to the viewers) goes to the driver from `watch_class`.

A subscribed connection is also sent only the meta that changed: each meta key whose value
(as JSON) equals what this connection was last sent is left out (`meta._keep: true`), and
the page takes it from the last frame it got (docs/streams.md, "Meta only when it
changed"). A new subscription, a new connection and a seek (a replay frame) get it whole.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import struct
import weakref
from collections import OrderedDict

from backend import protocol, view_keys, wire
from backend.admission import SessionError
from backend.frame_cut import FULL, WHOLE_META, Kept, Slice, _json, slice_frame

__all__ = [
    "FULL",
    "Slice",
    "apply",
    "check",
    "cut",
    "hold_frames",
    "put_latest",
    "rates",
    "slice_frame",
    "watch_class",
]

LOW_FPS = 5.0  # quality low: at most this many frames a second
# `wait=subscribe` without a subscription by then: whole frames (a view that failed to
# mount). A phone's page subscribed 0.3 s after its first frame here (docs/streams.md).
WAIT_S = 2.0
STATS_EVERY_S = 2.0
# A cut frame leaves its scalars out when the connection was sent its step's row at most
# this many steps ago (the page keeps ROWS_KEPT in frontend/js/core/client.js, more).
ROW_WINDOW = 256
_CACHED_FRAMES = 32  # the newest frames whose cuts are kept (a cut is needed right away)

counts = {"cuts": 0}  # cuts made (tests read it: one per distinct key and frame)


def _limit(session, name: str) -> int | None:
    """The exclusive bound the lab puts on view key `name` (layer < n_layers), or None."""
    spec = view_keys.keys_of(session.lab_cls).get(name)
    if spec is None or spec.get("type") != "int":
        return None
    below = spec.get("below")
    if below is not None and hasattr(session.params, below):
        return int(getattr(session.params, below))
    hi = spec.get("max")
    return None if hi is None else int(hi) + 1


def check(msg: protocol.Subscribe, session) -> Slice:
    """The subscription as a Slice, or invalid_params naming `layer` or `head`."""
    for name in ("layer", "head"):
        value = getattr(msg, name)
        if value is None:
            continue
        limit = _limit(session, name)
        if limit is None:
            lab = session.lab_cls.id
            text = f"{name}: the {lab} lab has no {name}s to subscribe to"
            raise SessionError("invalid_params", text, name, "err.sub_none", {"key": name})
        if value >= limit:
            text = f"{name}: {value} is beyond this model (it has {limit}: 0 to {limit - 1})"
            values = {"key": name, "value": value, "limit": limit}
            raise SessionError("invalid_params", text, name, "err.sub_range", values)
    names = None if msg.tensors == "*" else frozenset(msg.tensors)
    if msg.position is None:
        return Slice(names, msg.layer, msg.head, msg.quality)
    rows = session.lab_cls.per_position
    if not rows:
        lab = session.lab_cls.id
        text = f"position: the {lab} lab sends nothing per token position"
        raise SessionError("invalid_params", text, "position", "err.sub_none", {"key": "position"})
    return Slice(
        names,
        msg.layer,
        msg.head,
        msg.quality,
        msg.position,
        tuple(rows.get("tensors", ())),
        tuple(rows.get("meta", ())),
        tuple(rows.get("columns", ())),
    )


def hold_frames(box, session) -> None:
    """No frame for this connection before its first `subscribe` (`/ws?...&wait=subscribe`:
    a phone's page, which would get whole frames until its view subscribes). A page that
    has not subscribed after WAIT_S gets whole frames from then on, the latest first."""
    box.frames_held = True
    asyncio.get_running_loop().call_later(WAIT_S, _stop_holding, box, session)


def _stop_holding(box, session) -> None:
    if box.frames_held and box in session.bus.outboxes:
        box.frames_held = False
        put_latest(box, session)


def put_latest(box, session) -> None:
    """The session's newest recorded frame to this connection (a joiner, a new slice)."""
    latest = session.timeline.frame_at(session.step)
    if latest is not None:
        box.put_frame(latest)


def apply(box, msg: protocol.Subscribe, session) -> None:
    """Set a connection's Outbox from a checked `subscribe` (its sender reads them)."""
    sl = check(msg, session)
    box.frames_held = False  # (joined with wait=subscribe: frames start now, cut)
    box.slice = sl
    box.meta_seen = None  # the next frame carries the whole meta
    box.tensors = None  # the slice's tensor names are applied by `cut`
    box.scalars_row = msg.scalars in ("row", "either")  # a cut's scalars from the client's rows
    box.scalars_either = msg.scalars == "either"  # a frame's header scalars are its row
    fps = msg.max_fps
    box.max_fps = min(fps or LOW_FPS, LOW_FPS) if sl.quality == "low" else fps
    put_latest(box, session)  # the new slice now, not at the next step (a paused teacher)


# -- cutting ---------------------------------------------------------------------------------
class _Entry:
    """One published frame: its cuts by (slice, kept meta keys), its meta key by key as
    JSON (what a connection was sent, compared by the next frame), and which keys can be
    kept for a connection whose last meta is a given dict (one answer per distinct dict:
    1,000 phones that all got the previous frame ask once)."""

    __slots__ = ("data", "cuts", "meta", "replay", "keeps", "step", "row_of", "_rowed")

    def __init__(self, data: bytes) -> None:
        (n,) = struct.unpack_from("<I", data, 0)
        header = json.loads(data[4 : 4 + n])
        self.data = data
        self.cuts: dict[tuple[Slice, Kept], bytes] = {}
        self.meta = {k: _json(v) for k, v in (header.get("meta") or {}).items()}
        self.replay = bool(header.get("replay"))  # a seek's frame: always whole meta
        self.keeps: dict[int, tuple[dict[str, str], Kept]] = {}
        self.step = int(header["step"])
        # (run, step, scalars) for the check against the recorded row (an infer frame: none)
        live = not self.replay and not header.get("infer")
        self.row_of = (header.get("run"), self.step, header.get("scalars")) if live else None
        self._rowed: bool | None = None

    def rowed(self, session) -> bool:
        """Are the header's scalars this step's recorded row of the session's current run
        (so a connection sent that row has them)? Asked once per frame."""
        if self._rowed is None:
            self._rowed = self.row_of is not None and _is_row(session, *self.row_of)
        return self._rowed

    def keep(self, seen: dict[str, str] | None, scalars_row: bool = False) -> Kept:
        """For a connection last sent `seen`: the meta keys it need not be sent again, and
        the keys it has that this frame does not (dropped)."""
        if self.replay:
            return WHOLE_META
        if seen is None:
            return Kept(scalars_row=True) if scalars_row else WHOLE_META
        hit = self.keeps.get(id(seen))
        if hit is None or hit[0] is not seen:
            keep = frozenset(k for k, v in self.meta.items() if seen.get(k) == v)
            kept = Kept(keep, frozenset(seen) - set(self.meta)) if keep else WHOLE_META
            hit = self.keeps[id(seen)] = (seen, kept)
        kept = hit[1]
        return Kept(kept.keep, kept.drop, True) if scalars_row else kept


def _is_row(session, run, step: int, scalars) -> bool:
    if session is None or run != session.epoch or scalars is None:
        return False
    tl = session.timeline
    i = bisect.bisect_left(tl.scalar_steps, step)
    if i == len(tl.scalar_steps) or tl.scalar_steps[i] != step:
        return False
    return {k: wire.json_number(v) for k, v in tl.scalar_values[i].items()} == scalars


_cache: OrderedDict[int, _Entry] = OrderedDict()


def _entry(data: bytes) -> _Entry:
    """The published frame's entry, parsed once for every connection it is sent to."""
    entry = _cache.get(id(data))
    if entry is None or entry.data is not data:  # an id reused by a newer object
        entry = _Entry(data)
        _cache[id(data)] = entry
        while len(_cache) > _CACHED_FRAMES:
            _cache.popitem(last=False)
    else:
        _cache.move_to_end(id(data))
    return entry


def row_step(data: bytes, session) -> int | None:
    """The frame's step if its header's scalars are that step's recorded row of the
    session's current run (a live frame: it can stand for the row), else None."""
    entry = _entry(data)
    return entry.step if entry.rowed(session) else None


def cut(data: bytes, box, session=None) -> bytes:
    """The frame as this Outbox's subscription has it (the same bytes object for every
    connection with an equal slice and equal meta last sent); the full frame itself for a
    whole subscription. Call it only for a frame that is then sent: it records the meta.
    With the `session` it came from, a connection that keeps its rows (subscribed with
    `scalars: "row"`) and was already sent the frame's step as a `scalars` row (box.cursor)
    gets the cut without the header's scalars."""
    sl = box.slice or FULL
    if box.tensors is not None:  # a subscription set on the Outbox directly (bench, old code)
        sl = Slice(frozenset(box.tensors), sl.layer, sl.head, sl.quality)
    if sl.whole:
        box.meta_seen = None  # a whole frame carries all of it; the next cut starts over
        return data
    entry = _entry(data)
    cursor = getattr(box, "cursor", -1)
    has_row = (
        getattr(box, "scalars_row", False)
        and 0 <= cursor - entry.step < ROW_WINDOW
        and entry.rowed(session)
    )
    kept = entry.keep(getattr(box, "meta_seen", None), has_row)
    out = entry.cuts.get((sl, kept))
    if out is None:
        out = entry.cuts[(sl, kept)] = slice_frame(data, sl, kept)
        counts["cuts"] += 1
    box.meta_seen = entry.meta  # the same dict for every connection sent this frame
    return out


# -- the class figure ------------------------------------------------------------------------
_watched: weakref.WeakSet = weakref.WeakSet()


def watch_class(conn) -> None:
    """Send this driver connection `class_stats` every STATS_EVERY_S while it has viewers
    (started once per connection; ends when the connection does)."""
    if conn in _watched:
        return
    _watched.add(conn)
    asyncio.get_running_loop().create_task(_report(conn))


def rates(boxes, own, before: dict[int, int], seconds: float) -> protocol.ClassStats:
    """Bytes/s per viewer since the last report (`before`: id(box) -> bytes then; updated)."""
    per: list[float] = []
    now: dict[int, int] = {}
    for box in boxes:
        if box is own:
            continue
        now[id(box)] = box.sent_bytes
        per.append((box.sent_bytes - before.get(id(box), 0)) / seconds)
    before.clear()
    before.update(now)
    total = sum(per)
    return protocol.ClassStats(
        viewers=len(per),
        bytes_per_s=round(total, 1),
        per_viewer=round(total / len(per), 1) if per else 0.0,
        max_viewer=round(max(per), 1) if per else 0.0,
    )


async def _report(conn) -> None:
    before: dict[int, int] = {}
    loop = asyncio.get_running_loop()
    last = loop.time()
    while True:
        await asyncio.sleep(STATS_EVERY_S)
        if conn not in conn.sessions.connections:
            return
        s, now = conn.session, loop.time()
        if s is not None and conn.role == "driver" and len(s.bus) > 1:
            conn.reply(rates(s.bus.outboxes, conn.box, before, now - last))
        else:
            before.clear()
        last = now
