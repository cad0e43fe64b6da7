import json
import struct

import numpy as np
import pytest
import torch

from backend import wire
from backend.wire import Frame, TensorOut


def test_round_trip_every_dtype():
    a = np.linspace(-3, 5, 24, dtype=np.float32).reshape(2, 3, 4)
    frame = Frame(
        step=7,
        scalars={"loss": 0.5, "lr": 1e-3},
        tensors=[
            TensorOut("f32", a, "f32"),
            TensorOut("f16", torch.tensor(a), "f16"),
            TensorOut("u8", a, "u8"),
            TensorOut("norms", [1.0, 2.0, 3.0], "f32", labels=["a", "b", "c"]),
        ],
        meta={"tokens": ["今", "天"]},
    )
    header, t = wire.decode(wire.encode(frame))
    assert header["type"] == "frame" and header["step"] == 7
    assert header["scalars"] == {"loss": 0.5, "lr": 1e-3}
    assert header["meta"] == {"tokens": ["今", "天"]}
    np.testing.assert_array_equal(t["f32"], a)
    np.testing.assert_allclose(t["f16"], a, atol=5e-3)
    np.testing.assert_allclose(t["u8"], a, atol=(5 - -3) / 255 / 2 + 1e-6)
    assert t["u8"].shape == (2, 3, 4)
    meta = {m["name"]: m for m in header["tensors"]}
    assert meta["u8"]["min"] == -3 and meta["u8"]["max"] == 5
    assert meta["norms"]["labels"] == ["a", "b", "c"]
    assert meta["f32"]["length"] == 24 * 4 and meta["f16"]["length"] == 24 * 2


def test_payload_is_aligned_for_typed_arrays():
    buf = wire.encode(
        Frame(tensors=[TensorOut("a", [1.0, 2.0, 3.0], "u8"), TensorOut("b", [1.0], "f32")])
    )
    (n,) = struct.unpack_from("<I", buf)
    assert (4 + n) % 8 == 0
    header = json.loads(buf[4 : 4 + n])
    assert all(t["offset"] % 8 == 0 for t in header["tensors"])


def test_non_finite_values():
    frame = Frame(
        scalars={"loss": float("inf"), "b": float("nan"), "c": float("-inf")},
        tensors=[TensorOut("u", [1.0, float("nan"), 3.0], "u8"), TensorOut("f", [float("inf")])],
    )
    header, t = wire.decode(wire.encode(frame))  # JSON stays strict (no bare NaN)
    assert header["scalars"] == {"loss": "Infinity", "b": "NaN", "c": "-Infinity"}
    assert t["u"][0] == 1.0 and t["u"][2] == 3.0 and t["u"][1] == 1.0  # non-finite -> min
    assert np.isinf(t["f"][0])


def test_constant_u8_tensor():
    _, t = wire.decode(wire.encode(Frame(tensors=[TensorOut("c", np.full((3, 3), 2.5), "u8")])))
    np.testing.assert_array_equal(t["c"], np.full((3, 3), 2.5, dtype=np.float32))


def test_select_and_patch_header():
    buf = wire.encode(
        Frame(step=3, tensors=[TensorOut("a", [1.0, 2.0]), TensorOut("b", [3.0], "u8")])
    )
    header, t = wire.decode(wire.select(buf, {"b"}))
    assert [m["name"] for m in header["tensors"]] == ["b"] and t["b"][0] == pytest.approx(3.0)
    header, t = wire.decode(wire.patch_header(buf, {"replay": True}))
    assert header["replay"] is True and header["step"] == 3
    np.testing.assert_array_equal(t["a"], [1.0, 2.0])


def test_u8_is_much_smaller_than_json():
    pattern = torch.softmax(torch.randn(4, 32, 32), -1)
    buf = wire.encode(Frame(tensors=[TensorOut("p", pattern, "u8")]))
    as_json = json.dumps(pattern.tolist())
    assert len(buf) * 8 < len(as_json)
