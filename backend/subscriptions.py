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
import json
import re
import struct
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from backend import protocol, view_keys
from backend.admission import SessionError

LOW_FPS = 5.0  # quality low: at most this many frames a second
LOW_SCALE = 2  # quality low: u8 maps pooled 2 × 2 (half resolution)
STATS_EVERY_S = 2.0
_BLOCK = re.compile(r"blocks\.(\d+)\.")
_CACHED_FRAMES = 32  # the newest frames whose cuts are kept (a cut is needed right away)

counts = {"cuts": 0}  # cuts made (tests read it: one per distinct key and frame)


@dataclass(frozen=True)
class Slice:
    """A subscription's key: two connections with equal slices get the same bytes."""

    tensors: frozenset[str] | None = None  # None: every tensor
    layer: int | None = None
    head: int | None = None
    quality: str = "full"
    position: int | None = None
    rows: tuple[str, ...] = ()  # the lab's per-position tensors (cut to row `position`)
    meta_rows: tuple[str, ...] = ()  # and meta keys

    @property
    def whole(self) -> bool:
        return self == FULL


FULL = Slice()


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
    )


def apply(box, msg: protocol.Subscribe, session) -> None:
    """Set a connection's Outbox from a checked `subscribe` (its sender reads them)."""
    sl = check(msg, session)
    box.slice = sl
    box.meta_seen = None  # the next frame carries the whole meta
    box.tensors = None  # the slice's tensor names are applied by `cut`
    fps = msg.max_fps
    box.max_fps = min(fps or LOW_FPS, LOW_FPS) if sl.quality == "low" else fps
    latest = session.timeline.frame_at(session.step)
    if latest is not None:  # the new slice now, not at the next step (a paused teacher)
        box.put_frame(latest)


# -- cutting ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Kept:
    """Meta keys left out of a cut (the page has them) and keys the page must drop."""

    keep: frozenset[str] = frozenset()
    drop: frozenset[str] = frozenset()


WHOLE_META = Kept()


class _Entry:
    """One published frame: its cuts by (slice, kept meta keys), its meta key by key as
    JSON (what a connection was sent, compared by the next frame), and which keys can be
    kept for a connection whose last meta is a given dict (one answer per distinct dict:
    1,000 phones that all got the previous frame ask once)."""

    __slots__ = ("data", "cuts", "meta", "replay", "keeps")

    def __init__(self, data: bytes) -> None:
        (n,) = struct.unpack_from("<I", data, 0)
        header = json.loads(data[4 : 4 + n])
        self.data = data
        self.cuts: dict[tuple[Slice, Kept], bytes] = {}
        self.meta = {k: _json(v) for k, v in (header.get("meta") or {}).items()}
        self.replay = bool(header.get("replay"))  # a seek's frame: always whole meta
        self.keeps: dict[int, tuple[dict[str, str], Kept]] = {}

    def keep(self, seen: dict[str, str] | None) -> Kept:
        """For a connection last sent `seen`: the meta keys it need not be sent again, and
        the keys it has that this frame does not (dropped)."""
        if seen is None or self.replay:
            return WHOLE_META
        hit = self.keeps.get(id(seen))
        if hit is not None and hit[0] is seen:
            return hit[1]
        keep = frozenset(k for k, v in self.meta.items() if seen.get(k) == v)
        kept = Kept(keep, frozenset(seen) - set(self.meta)) if keep else WHOLE_META
        self.keeps[id(seen)] = (seen, kept)
        return kept


_cache: OrderedDict[int, _Entry] = OrderedDict()


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def cut(data: bytes, box) -> bytes:
    """The frame as this Outbox's subscription has it (the same bytes object for every
    connection with an equal slice and equal meta last sent); the full frame itself for a
    whole subscription. Call it only for a frame that is then sent: it records the meta."""
    sl = box.slice or FULL
    if box.tensors is not None:  # a subscription set on the Outbox directly (bench, old code)
        sl = Slice(frozenset(box.tensors), sl.layer, sl.head, sl.quality)
    if sl.whole:
        box.meta_seen = None  # a whole frame carries all of it; the next cut starts over
        return data
    entry = _cache.get(id(data))
    if entry is None or entry.data is not data:  # an id reused by a newer object
        entry = _Entry(data)
        _cache[id(data)] = entry
        while len(_cache) > _CACHED_FRAMES:
            _cache.popitem(last=False)
    else:
        _cache.move_to_end(id(data))
    kept = entry.keep(getattr(box, "meta_seen", None))
    out = entry.cuts.get((sl, kept))
    if out is None:
        out = entry.cuts[(sl, kept)] = slice_frame(data, sl, kept)
        counts["cuts"] += 1
    box.meta_seen = entry.meta  # the same dict for every connection sent this frame
    return out


def _wanted(name: str, sl: Slice) -> bool:
    if sl.tensors is not None and name not in sl.tensors:
        return False
    m = _BLOCK.match(name)
    return not (m and sl.layer is not None and int(m.group(1)) != sl.layer)


def _pool(q: np.ndarray) -> np.ndarray:
    """u8 [..., R, C] -> [..., ceil(R/2), ceil(C/2)]: the mean of each 2 × 2 block (an odd
    edge repeats its last row or column), rounded. Averaging the levels averages the values:
    a u8 value is min + (max - min) * q / 255, linear in q, so min and max stay."""
    r, c = q.shape[-2:]
    x = q.astype(np.float32)
    pad = [(0, 0)] * (x.ndim - 2) + [(0, r % 2), (0, c % 2)]
    if r % 2 or c % 2:
        x = np.pad(x, pad, mode="edge")
    x = x.reshape(*x.shape[:-2], x.shape[-2] // 2, 2, x.shape[-1] // 2, 2).mean(axis=(-3, -1))
    return np.rint(x).astype(np.uint8)


def lower_triangle(q: np.ndarray) -> bytes:
    """u8 [..., T, T] -> each matrix's rows 0..T-1 with their first 1..T values: T(T+1)/2
    bytes a matrix, about half (wire.unpack_tril and the page's decoder put the zeros back)."""
    rows, cols = np.tril_indices(q.shape[-1])
    return np.ascontiguousarray(q[..., rows, cols]).tobytes()


def slice_frame(buf: bytes, sl: Slice, same: Kept = WHOLE_META) -> bytes:
    """A frame's bytes cut to a slice: the tensors named and of the layer, a head's slice of
    per-head maps ([H, T, T] -> [1, T, T]), u8 maps pooled for quality low, and a square u8
    map that is zero above its diagonal (a causal mask's) sent as its lower triangle
    (`packed: "tril"` on its descriptor; its `shape` stays the full one). The header's
    `slice` says what was done: {layer, head, quality, scale, pooled: {name: [R, C]}}. The
    meta keys in `same.keep` are left out: `meta._keep` is true when some were (the page
    takes the rest from its last frame, less `meta._drop`), false when the meta is whole."""
    (n,) = struct.unpack_from("<I", buf, 0)
    header = json.loads(buf[4 : 4 + n])
    payload = memoryview(buf)[4 + n :]
    parts: list[bytes] = []
    kept: list[dict[str, Any]] = []
    pooled: dict[str, list[int]] = {}
    by_row: dict[str, int] = {}  # a per-position output cut to one row: its row count
    offset = 0
    for t in header["tensors"]:
        if not _wanted(t["name"], sl):
            continue
        raw: bytes | memoryview = payload[t["offset"] : t["offset"] + t["length"]]
        shape = list(t["shape"])
        if sl.position is not None and t["name"] in sl.rows:
            if sl.position >= shape[0]:  # a shorter example than the page last saw: no row
                continue
            size = len(raw) // shape[0]
            raw = raw[sl.position * size : (sl.position + 1) * size]
            by_row[t["name"]] = shape[0]
            shape = [1, *shape[1:]]
        is_map = t["dtype"] == "u8" and len(shape) >= 2
        arr = None  # the map's levels, once a cut below has them as an array
        per_head = is_map and len(shape) == 3 and _BLOCK.match(t["name"]) is not None
        if (per_head and sl.head is not None) or (is_map and sl.quality == "low"):
            arr = np.frombuffer(raw, np.uint8).reshape(shape)
            if per_head and sl.head is not None:
                if sl.head >= shape[0]:  # params changed under the subscription: nothing
                    continue
                arr = arr[sl.head : sl.head + 1]
            if is_map and sl.quality == "low":
                pooled[t["name"]] = shape[-2:]
                arr = _pool(arr)
            shape, raw = list(arr.shape), np.ascontiguousarray(arr).tobytes()
        desc = {**t, "shape": shape}
        if is_map and shape[-1] == shape[-2] > 1:
            if arr is None:
                arr = np.frombuffer(raw, np.uint8).reshape(shape)
            if not np.triu(arr, 1).any():  # a causal map: level 0 above the diagonal
                raw, desc["packed"] = lower_triangle(arr), "tril"
        pad = (-offset) % 8
        parts.append(b"\0" * pad)
        offset += pad
        parts.append(bytes(raw))
        kept.append({**desc, "offset": offset, "length": len(raw)})
        offset += len(raw)
    header["tensors"] = kept
    header["slice"] = {
        "layer": sl.layer,
        "head": sl.head,
        "quality": sl.quality,
        "scale": LOW_SCALE if sl.quality == "low" else 1,
        "pooled": pooled,
    }
    meta = dict(header.get("meta") or {})
    if sl.position is not None:
        for key in sl.meta_rows:
            value = meta.get(key)
            if isinstance(value, list) and key not in same.keep:
                by_row[key] = len(value)
                meta[key] = value[sl.position : sl.position + 1]
        header["slice"]["position"] = sl.position
        header["slice"]["rows"] = by_row  # name -> the rows it has whole
    header["meta"] = {k: v for k, v in meta.items() if k not in same.keep}
    header["meta"]["_keep"] = bool(same.keep)
    if same.drop:
        header["meta"]["_drop"] = sorted(same.drop)
    return _pack(header, b"".join(parts))


def _pack(header: dict[str, Any], payload: bytes) -> bytes:
    """wire._pack with the header's text as UTF-8 (not \\u escapes: a text model's pieces
    such as ␣ and ⏎ cost 3 bytes, not 6); the page and wire.decode read either."""
    head = _json(header).encode()
    head += b" " * ((-(4 + len(head))) % 8)  # payload starts 8-byte aligned
    return struct.pack("<I", len(head)) + head + payload


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
