"""Scenario 3 (bytes): bytes on the wire per `gpt` frame vs the same tensors as JSON.

The target (≤ 1/8) compares the tensors as they travel (payload + their descriptors in the
header) with the same tensors as JSON lists of floats (`tensor.tolist()`, as torch gives
them). The whole frame is reported beside it: what a naive server would send is the same
header, scalars and meta with those JSON lists, and both sides count the websocket frame
header. The scalars and meta are the same bytes in both, so on a small frame they set a
floor on the whole-frame ratio that no tensor encoding can go under; the note prints it. Three configurations: the default (reverse, T = 13), the
English text at the default context (the example is 64 tokens), and the largest grid the
lab allows (6 layers × 8 heads over the 64-token example).
"""

from __future__ import annotations

import json
import struct
from functools import cache

import torch

from backend import wire
from backend.labs import REGISTRY, load_all
from bench.report import Figure, Result

S = "bytes"
CONFIGS = {
    "default (reverse, T=13)": {},
    "text-en (T=64)": {"data": "text-en"},
    "largest (6×8 heads, T=64)": {"data": "text-en", "n_layers": 6, "n_heads": 8, "d_model": 128},
}


def ws_overhead(n: int) -> int:
    """Bytes of a server→client websocket frame header for an n-byte message."""
    return 2 if n < 126 else (4 if n < 65536 else 10)


@cache
def gpt_frame(name: str) -> tuple[bytes, dict[str, int]]:
    """One captured training frame's bytes, and the sizes of its parts on either side."""
    load_all()
    torch.set_num_threads(1)
    lab_cls = REGISTRY["gpt"]
    torch.manual_seed(0)
    lab = lab_cls(lab_cls.Params(**CONFIGS[name]), 0, torch.device("cpu"))
    for _ in range(3):
        lab.step(False)
    frame = lab.step(True)
    frame.step = 4
    data = wire.encode(frame, {"run": 0})
    header, _ = wire.decode(data)
    as_json = {
        **{k: v for k, v in header.items() if k != "tensors"},
        "tensors": [
            {
                "name": t.name,
                "shape": list(wire.to_numpy(t.data).shape),
                "data": torch.as_tensor(wire.to_numpy(t.data)).flatten().tolist(),
                **({"labels": t.labels} if t.labels else {}),
            }
            for t in frame.tensors
        ],
    }
    n_head = struct.unpack_from("<I", data)[0]
    sizes = {
        "wire": len(data),
        "json": len(_json(as_json)),
        # Tensors only: the payload and each tensor's descriptor vs the JSON tensor list.
        "wire_tensors": len(data) - 4 - n_head + len(_json(header["tensors"])),
        "json_tensors": len(_json(as_json["tensors"])),
        "header": 4 + n_head,
        "meta": len(_json(header.get("meta", {}))),
        "values": sum(wire.to_numpy(t.data).size for t in frame.tensors),
    }
    return data, sizes


def _json(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def run(opts) -> Result:
    res = Result()
    for name in CONFIGS:
        _, z = gpt_frame(name)
        n_wire, n_json = z["wire"] + ws_overhead(z["wire"]), z["json"] + ws_overhead(z["json"])
        shared = z["json"] - z["json_tensors"]  # header, scalars and meta: in both formats
        res.figures += [
            Figure(
                S,
                f"tensors, {name}",
                z["wire_tensors"] / z["json_tensors"],
                "",
                ("≤", 1 / 8),
                baseline=f"JSON {z['json_tensors']:,} B",
                note=f"{z['wire_tensors']:,} B: payload + descriptors, {z['values']:,} values",
            ),
            Figure(
                S,
                f"whole frame, {name}",
                n_wire / n_json,
                "",
                baseline=f"JSON {n_json:,} B",
                note=(
                    f"{n_wire:,} B; header {z['header']:,} B of which meta {z['meta']:,}; "
                    f"scalars + meta alone are {shared / n_json:.3f} of the JSON frame"
                ),
            ),
        ]
        res.raw[name] = z
    return res
