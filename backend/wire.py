"""The only tensor -> bytes code: binary frame encoding and quantization.

A frame is: 4-byte little-endian header length, the header as UTF-8 JSON, then the payload.
The header is padded with spaces so the payload starts 8-byte aligned, and every tensor's
offset (from the payload start) is 8-byte aligned, so a browser can view f32 data in place.
A u8 tensor decodes as ``min + (max - min) * q / 255``. Non-finite scalars travel as the
strings "NaN", "Infinity", "-Infinity" (JSON has no such numbers; ``Number(s)`` reads them).
So do non-finite numbers anywhere else in the header (a diverged arm's meta: its activations'
spread is NaN), and the header then says `nonfinite: true`: the decoders (here and the page's
frame.js) read those strings in `meta` back as numbers. A frame never fails to encode for them.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch

Dtype = Literal["f32", "f16", "u8"]
_NP = {"f32": np.float32, "f16": np.float16, "u8": np.uint8}
_ALIGN = 8


@dataclass
class TensorOut:
    """A named tensor for the wire. `dtype` is how it travels; u8 is for pictures."""

    name: str
    data: Any  # torch.Tensor | np.ndarray | list
    dtype: Dtype = "f32"
    labels: list[str] | None = None


@dataclass
class Frame:
    step: int = 0
    scalars: dict[str, float] = field(default_factory=dict)
    tensors: list[TensorOut] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)  # small JSON: tokens, axis ranges, ...
    # An `infer` frame that changed the weights (apple's pressed `step`): the session records
    # it as the run's next step, so the timeline, the scrubber and a rejoin show it.
    advanced: bool = False
    # A picture drawn later (Lab.pictures_later): fills `tensors` and `meta` when called.
    finish: Callable[[], None] | None = field(default=None, repr=False, compare=False)


def json_number(x: float) -> float | str:
    x = float(x)
    if math.isfinite(x):
        return x
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def to_numpy(data: Any) -> np.ndarray:
    if isinstance(data, torch.Tensor):
        return data.detach().to("cpu", torch.float32).numpy()
    return np.asarray(data, dtype=np.float32)


def quantize(values: np.ndarray, dtype: Dtype) -> tuple[bytes, dict[str, Any]]:
    """Encode an array; returns (bytes, header fields). Non-finite values become min in u8."""
    if dtype != "u8":
        return np.ascontiguousarray(values, dtype=_NP[dtype]).tobytes(), {}
    finite = np.isfinite(values)
    if finite.all():
        lo, hi = (float(values.min()), float(values.max())) if values.size else (0.0, 0.0)
    elif finite.any():
        lo, hi = float(values[finite].min()), float(values[finite].max())
    else:
        lo = hi = 0.0
    span = hi - lo
    if span > 0:
        q = np.clip(np.rint((np.where(finite, values, lo) - lo) * (255.0 / span)), 0, 255)
    else:
        q = np.zeros(values.shape)
    return q.astype(np.uint8).tobytes(), {"min": lo, "max": hi}


def encode(frame: Frame, extra: dict[str, Any] | None = None) -> bytes:
    """Frame -> bytes. Quantizes on the calling thread (call it on the session's worker)."""
    parts: list[bytes] = []
    metas: list[dict[str, Any]] = []
    offset = 0
    for t in frame.tensors:
        arr = to_numpy(t.data)
        raw, fields = quantize(arr, t.dtype)
        pad = (-offset) % _ALIGN
        if pad:
            parts.append(b"\0" * pad)
            offset += pad
        meta = {"name": t.name, "dtype": t.dtype, "shape": list(arr.shape), "offset": offset}
        meta["length"] = len(raw)
        meta.update(fields)
        if t.labels is not None:
            meta["labels"] = list(t.labels)
        metas.append(meta)
        parts.append(raw)
        offset += len(raw)
    header: dict[str, Any] = {
        "type": "frame",
        "step": frame.step,
        "scalars": {k: json_number(v) for k, v in frame.scalars.items()},
        "tensors": metas,
    }
    if frame.meta:
        header["meta"] = frame.meta
    if extra:
        header.update(extra)
    return _pack(header, b"".join(parts))


def finite_json(value: Any) -> Any:
    """`value` with every non-finite float (at any depth) as json_number's string."""
    if isinstance(value, float):
        return value if math.isfinite(value) else json_number(value)
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    return value


def revive(value: Any) -> Any:
    """finite_json's strings back as floats (in a `nonfinite` header's meta)."""
    if isinstance(value, str):
        return float(value.replace("Infinity", "inf")) if value in _NONFINITE else value
    if isinstance(value, dict):
        return {k: revive(v) for k, v in value.items()}
    if isinstance(value, list):
        return [revive(v) for v in value]
    return value


_NONFINITE = frozenset(("NaN", "Infinity", "-Infinity"))


def _dumps(header: dict[str, Any]) -> str:
    try:
        return json.dumps(header, separators=(",", ":"), allow_nan=False)
    except ValueError:  # a NaN or an infinity somewhere (the scalars are already strings)
        safe = {**finite_json(header), "nonfinite": True}
        return json.dumps(safe, separators=(",", ":"), allow_nan=False)


def _pack(header: dict[str, Any], payload: bytes | memoryview) -> bytes:
    head = _dumps(header).encode()
    head += b" " * ((-(4 + len(head))) % _ALIGN)  # payload starts 8-byte aligned
    return struct.pack("<I", len(head)) + head + bytes(payload)


def decode(buf: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Bytes -> (header, {name: float32 array}); the reference decoder (tests, bench, clients)."""
    (n,) = struct.unpack_from("<I", buf, 0)
    header = json.loads(buf[4 : 4 + n])
    if header.get("nonfinite") and "meta" in header:
        header["meta"] = revive(header["meta"])
    payload = memoryview(buf)[4 + n :]
    out: dict[str, np.ndarray] = {}
    for t in header["tensors"]:
        raw = payload[t["offset"] : t["offset"] + t["length"]]
        arr = np.frombuffer(raw, dtype=_NP[t["dtype"]]).astype(np.float32)
        if t.get("packed") == "tril":  # a cut's causal map: its lower triangle only
            arr = unpack_tril(arr, t["shape"])
        if t["dtype"] == "u8":
            arr = t["min"] + (t["max"] - t["min"]) * arr / 255.0
        out[t["name"]] = arr.reshape(t["shape"])
    return header, out


def unpack_tril(values: np.ndarray, shape: list[int]) -> np.ndarray:
    """A `packed: "tril"` tensor's values (each [T, T] matrix's lower triangle, row by row)
    -> the full shape, zero (level 0) above each diagonal."""
    t = shape[-1]
    rows, cols = np.tril_indices(t)
    out = np.zeros((*shape[:-2], t, t), values.dtype)
    out[..., rows, cols] = values.reshape(*shape[:-2], len(rows))
    return out


def patch_header(buf: bytes, extra: dict[str, Any]) -> bytes:
    """Re-encode only the header (e.g. mark a recorded frame as a replay), payload untouched."""
    (n,) = struct.unpack_from("<I", buf, 0)
    header = json.loads(buf[4 : 4 + n])
    header.update(extra)
    return _pack(header, memoryview(buf)[4 + n :])


def frame_step(buf: bytes) -> int:
    (n,) = struct.unpack_from("<I", buf, 0)
    return int(json.loads(buf[4 : 4 + n])["step"])


def select(buf: bytes, names: set[str]) -> bytes:
    """A frame with only the named tensors (for a connection that subscribed to a subset)."""
    (n,) = struct.unpack_from("<I", buf, 0)
    header = json.loads(buf[4 : 4 + n])
    payload = memoryview(buf)[4 + n :]
    parts: list[bytes] = []
    kept: list[dict[str, Any]] = []
    offset = 0
    for t in header["tensors"]:
        if t["name"] not in names:
            continue
        pad = (-offset) % _ALIGN
        parts.append(b"\0" * pad)
        offset += pad
        parts.append(bytes(payload[t["offset"] : t["offset"] + t["length"]]))
        kept.append({**t, "offset": offset})
        offset += t["length"]
    header["tensors"] = kept
    return _pack(header, b"".join(parts))
