"""Messages framed once and written straight to each viewer's socket.

A server's websocket frames are unmasked, so a message sent to 1,000 viewers is the same
bytes on each of their sockets. uvicorn's ASGI `send` frames it again for every connection
(websockets' frame serialisation) and costs a wake-up of that connection's sender task;
with 1,000 viewers of one class that per-viewer work was most of the event loop's time
(docs/lecture.md). The sans-I/O protocol here adds one ASGI scope extension,
`shaomai.write_framed`: it writes bytes framed by `framed()` to the transport when the
connection is open and its socket is not pushing back, and says whether it did. Anything
else (a paused socket, a closing connection, another server) goes the ASGI way.
"""

from __future__ import annotations

import struct
from collections import OrderedDict

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

EXTENSION = "shaomai.write_framed"
_KEEP = 64  # the newest framed messages kept (a frame's cuts and its scalars texts)
_framed: OrderedDict[int, tuple[bytes | str, bytes]] = OrderedDict()


def frame_bytes(payload: bytes, text: bool) -> bytes:
    """One final, unmasked websocket frame (RFC 6455 §5.2) carrying `payload`."""
    first = 0x81 if text else 0x82
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", first, n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", first, 126, n)
    else:
        head = struct.pack("!BBQ", first, 127, n)
    return head + payload


def framed(message: bytes | str) -> bytes:
    """`message` as a websocket frame, made once for the same object sent to many viewers."""
    hit = _framed.get(id(message))
    if hit is not None and hit[0] is message:
        _framed.move_to_end(id(message))
        return hit[1]
    text = isinstance(message, str)
    out = frame_bytes(message.encode() if text else message, text)
    _framed[id(message)] = (message, out)  # held here, so its id is not reused meanwhile
    while len(_framed) > _KEEP:
        _framed.popitem(last=False)
    return out


class DirectWritesProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O websocket protocol with the `shaomai.write_framed` extension."""

    def handle_connect(self, event) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)  # none when the handshake was refused
        if scope is not None:
            scope["extensions"][EXTENSION] = self.write_framed  # before the app's task runs

    async def send(self, message) -> None:
        await super().send(message)
        if self.handshake_complete and self.response is not None:
            # The upgrade's request and response (≈ 40 header objects, 3 KB) are not read
            # again once the response is written; a lecture hall holds 1,000 of them.
            self.request = self.response = None

    def write_framed(self, data: bytes) -> bool:
        """Write frames made by `framed()` now; False (nothing written) unless the
        connection is open and its socket keeps up: then the caller sends it the ASGI way,
        which waits for the socket."""
        if (
            not self.handshake_complete
            or self.close_sent
            or self.disconnected
            or self.initial_response is not None
            or not self.writable.is_set()
            or self.transport.is_closing()
        ):
            return False
        self.transport.write(data)
        return True
