"""Messages over a session process's pipe (backend/session_process.py), tensors by value.

`Connection.send` pickles with multiprocessing's pickler, in which torch registers its
own reductions: each CPU tensor is moved into shared memory and its file descriptor handed
across, one at a time. A 6 × 8 `gpt` state (310 tensors, 14.6 MB: weights and AdamW
moments) took ≈ 250 ms that way, and the training in the child waited for it at every
save of a shared class. Here a plain tensor goes as its bytes (a numpy array in the
pickle); any other (bfloat16, sparse, one that needs its gradient) as plain pickle writes it.
The same tensor object twice in a message stays one (pickle's memo); two views of one
storage arrive as two tensors, which a state dict never needs.

Only this pipe is pickled in the app: its bytes come from a process the server forked
itself, never from a user (docs/security.md, promise 8).
"""

from __future__ import annotations

import io
import pickle
from typing import Any

import torch

_AS_NUMPY = {
    torch.float64,
    torch.float32,
    torch.float16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
}


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if (
            type(obj) is torch.Tensor
            and obj.device.type == "cpu"
            and obj.layout == torch.strided
            and obj.dtype in _AS_NUMPY
            and not obj.requires_grad
        ):
            # numpy unpickles the bytes into memory of its own, writable: torch takes it.
            return torch.from_numpy, (obj.contiguous().numpy(),)
        return NotImplemented


def dumps(obj: Any) -> bytes:
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


def send(conn, obj: Any) -> None:
    conn.send_bytes(dumps(obj))


def recv(conn) -> Any:
    return pickle.loads(conn.recv_bytes())
