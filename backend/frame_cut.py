"""A published frame cut to one subscription: the bytes a phone is sent (docs/streams.md).

`Slice` is what a connection subscribed to (backend/subscriptions.py checks it and shares
each cut among the connections with an equal key); `slice_frame` makes the cut: the layer's
tensors, a head's map, u8 maps pooled for quality low, a causal map as its lower triangle,
one token position's rows and columns of the lab's per-position outputs, only the meta that
changed, and no header scalars where the connection already has them as its step's row.
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from backend.wire import _NP  # the wire's dtypes

LOW_SCALE = 2  # quality low: u8 maps pooled 2 × 2 (half resolution)
_BLOCK = re.compile(r"blocks\.(\d+)\.")


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
    cols: tuple[str, ...] = ()  # tensors whose last axis is the position (cut to one column)

    @property
    def whole(self) -> bool:
        return self == FULL


FULL = Slice()


@dataclass(frozen=True)
class Kept:
    """Meta keys left out of a cut (the page has them) and keys the page must drop;
    `scalars_row`: the header's scalars are left out, the page has them as the step's row."""

    keep: frozenset[str] = frozenset()
    drop: frozenset[str] = frozenset()
    scalars_row: bool = False


WHOLE_META = Kept()


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


def _column(raw: bytes | memoryview, desc: dict[str, Any], p: int) -> bytes:
    """A tensor [..., T]'s column p as [..., 1] (its dtype and, for u8, its min/max kept)."""
    arr = np.frombuffer(raw, _NP[desc["dtype"]]).reshape(desc["shape"])
    return np.ascontiguousarray(arr[..., p : p + 1]).tobytes()


def slice_frame(buf: bytes, sl: Slice, same: Kept = WHOLE_META) -> bytes:
    """A frame's bytes cut to a slice: the tensors named and of the layer, a head's slice of
    per-head maps ([H, T, T] -> [1, T, T]), u8 maps pooled for quality low, and a square u8
    map that is zero above its diagonal (a causal mask's) sent as its lower triangle
    (`packed: "tril"` on its descriptor; its `shape` stays the full one). The header's
    `slice` says what was done: {layer, head, quality, scale, pooled: {name: [R, C]}}. The
    meta keys in `same.keep` are left out: `meta._keep` is true when some were (the page
    takes the rest from its last frame, less `meta._drop`), false when the meta is whole.
    With `same.scalars_row` the header's scalars are left out (`slice.scalars: "row"`)."""
    (n,) = struct.unpack_from("<I", buf, 0)
    header = json.loads(buf[4 : 4 + n])
    payload = memoryview(buf)[4 + n :]
    parts: list[bytes] = []
    kept: list[dict[str, Any]] = []
    pooled: dict[str, list[int]] = {}
    by_row: dict[str, int] = {}  # a per-position output cut to one row: its row count
    by_col: dict[str, int] = {}  # one cut to one column: its column count
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
        elif sl.position is not None and t["name"] in sl.cols and shape:
            if sl.position >= shape[-1]:
                continue
            raw = _column(raw, t, sl.position)
            by_col[t["name"]] = shape[-1]
            shape = [*shape[:-1], 1]
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
    if same.scalars_row:  # the page has them: the `scalars` row of this run and step
        del header["scalars"]
        header["slice"]["scalars"] = "row"
    meta = dict(header.get("meta") or {})
    if sl.position is not None:
        for key in sl.meta_rows:
            value = meta.get(key)
            if isinstance(value, list) and key not in same.keep:
                by_row[key] = len(value)
                meta[key] = value[sl.position : sl.position + 1]
        header["slice"]["position"] = sl.position
        header["slice"]["rows"] = by_row  # name -> the rows it has whole
        if by_col:
            header["slice"]["cols"] = by_col  # name -> the columns it has whole
    header["meta"] = {k: v for k, v in meta.items() if k not in same.keep}
    header["meta"]["_keep"] = bool(same.keep)
    if same.drop:
        header["meta"]["_drop"] = sorted(same.drop)
    return _pack(header, b"".join(parts))


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _pack(header: dict[str, Any], payload: bytes) -> bytes:
    """wire._pack with the header's text as UTF-8 (not \\u escapes: a text model's pieces
    such as ␣ and ⏎ cost 3 bytes, not 6); the page and wire.decode read either."""
    head = _json(header).encode()
    head += b" " * ((-(4 + len(head))) % 8)  # payload starts 8-byte aligned
    return struct.pack("<I", len(head)) + head + payload
