"""Promise 3: a slow or silent client costs nothing.

A driver on a raw socket (a 4 KiB receive buffer, the websocket handshake done by hand)
stops reading while its session plays for a few seconds; a viewer on another connection
reads everything meanwhile. The driver then pauses, takes one more step and reads again: it
gets the newest frame (that last step's) and a scalar history with every step exactly once.

Between the app and a silent client sits the kernel: on this machine a connection's socket
send buffer grows to about 4 MB (net.ipv4.tcp_wmem), which holds every frame of a few
seconds of a small lab. So the second test runs the same stall against uvicorn in this
process with a 16 KiB send buffer on its listening socket (accepted sockets inherit it), and
samples the connection's Outbox (backend/bus.py) the whole time: it stays within its bounds
while the client falls thousands of steps behind, and the driver gets far fewer frames than
the viewer (old ones were dropped, not queued). Memory figures for a full minute belong to
bench/, not here.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import threading
import time
from typing import Any

import pytest

from backend.bus import Outbox
from backend.config import Settings
from tests.conftest import serve_in_thread, start_server, stop_server

STALL_S = 4.0  # the bench stalls a full minute; here a few seconds show the mechanism
SPEED = 400  # steps/s while playing: ~2,000 steps behind by the end of the stall
LAB_PARAMS = {"epochs": 100000}
MARK = 97  # hover value of the driver's last `view`: everything before it has been sent


class RawClient:
    """A minimal websocket client on a plain socket, so reading can really stop."""

    def __init__(self, port: int, rcvbuf: int = 4096, timeout: float = 30.0):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)  # before connect
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        self.buf = bytearray()
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, _, rest = bytes(self.buf).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101"), head
        self.buf = bytearray(rest)
        self.bytes_read = 0

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buf += chunk

    def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._fill()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        self.bytes_read += n
        return out

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack("!Q", n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + masked)

    def send(self, msg: dict[str, Any]) -> None:
        self._send_frame(0x1, json.dumps(msg).encode())

    def recv(self) -> dict[str, Any]:
        """The next message: a JSON dict, or {"type": "frame", "step", "header"} for binary."""
        parts, first = [], None
        while True:
            b0, b1 = self._take(2)
            n = b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack("!H", self._take(2))
            elif n == 127:
                (n,) = struct.unpack("!Q", self._take(8))
            payload = self._take(n)
            opcode = b0 & 0x0F
            if opcode == 0x9:  # ping: answer, as any client does
                self._send_frame(0xA, payload)
                continue
            if opcode == 0x8:
                raise ConnectionError(f"closed by the server: {payload!r}")
            if opcode in (0x1, 0x2):
                first = opcode
            parts.append(payload)
            if b0 & 0x80:
                break
        data = b"".join(parts)
        if first == 0x1:
            return json.loads(data)
        (hn,) = struct.unpack_from("<I", data)
        header = json.loads(data[4 : 4 + hn])
        return {"type": "frame", "step": header["step"], "header": header}

    def until(self, pred) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        seen = []
        for _ in range(1_000_000):
            msg = self.recv()
            if pred(msg):
                return msg, seen
            seen.append(msg)
        raise AssertionError("never came")

    def close(self) -> None:
        self.sock.close()


class Viewer(threading.Thread):
    """A well-behaved client that reads everything, in the background."""

    def __init__(self, port: int, session: str):
        super().__init__(daemon=True)
        self.client = RawClient(port, rcvbuf=1 << 20)
        self.client.send({"type": "join", "session": session})
        self.frames: list[int] = []
        self.done = threading.Event()

    def run(self) -> None:
        try:
            while not self.done.is_set():
                msg = self.client.recv()
                if msg["type"] == "frame":
                    self.frames.append(msg["step"])
                if msg["type"] == "view" and msg["state"].get("hover") == MARK:
                    self.done.set()
        except (OSError, ConnectionError):
            pass


def scalar_steps(messages: list[dict[str, Any]], run: int = 0) -> list[int]:
    steps: list[int] = []
    for m in messages:
        if m.get("run") != run:
            continue
        if m["type"] == "scalars":
            steps.append(m["step"])
        elif m["type"] == "history":
            steps += m["steps"]
    return steps


def stall_and_recover(port: int, sample=None) -> dict[str, Any]:
    """The scenario; `sample()` is called every 20 ms while the driver does not read."""
    driver = RawClient(port)
    try:
        driver.send({"type": "open", "lab": "linear-regression", "params": LAB_PARAMS})
        ready, before = driver.until(lambda m: m["type"] == "ready")
        first, more = driver.until(lambda m: m["type"] == "frame")
        before += [ready, *more, first]
        viewer = Viewer(port, ready["session"])
        viewer.start()
        driver.send({"type": "control", "action": "play", "speed": SPEED})
        t_end = time.monotonic() + STALL_S
        while time.monotonic() < t_end:  # the driver reads nothing now
            if sample:
                sample()
            time.sleep(0.02)
        driver.send({"type": "control", "action": "pause"})
        driver.send({"type": "control", "action": "step", "count": 1})
        driver.send({"type": "view", "state": {"hover": MARK}})
        if sample:
            for _ in range(25):
                sample()
                time.sleep(0.02)
        bytes_before = driver.bytes_read
        _, after = driver.until(lambda m: m["type"] == "view" and m["state"]["hover"] == MARK)
        viewer.done.wait(30)
        viewer.client.close()
        return {
            "messages": before + after,
            "after": after,
            "bytes_after": driver.bytes_read - bytes_before,
            "viewer_frames": viewer.frames,
        }
    finally:
        driver.close()


def check_recovery(out: dict[str, Any]) -> list[int]:
    after = out["after"]
    statuses = [m for m in after if m["type"] == "status" and m["state"] == "paused"]
    final = statuses[-1]["step"]  # after the pause and the one step
    assert final > SPEED * STALL_S / 4  # it really played while the driver was silent
    # A complete scalar history: every step from 0 to the last, each exactly once.
    assert scalar_steps(out["messages"]) == list(range(final + 1))
    # The newest picture: the last frame is that last step's.
    frames = [m["step"] for m in after if m["type"] == "frame"]
    assert frames and frames[-1] == final
    assert frames == sorted(frames)
    return frames


def test_a_silent_client_gets_the_latest_frame_and_every_scalar(tmp_path):
    proc, url, log = start_server(data_dir=tmp_path)
    try:
        out = stall_and_recover(int(url.rsplit(":", 1)[1]))
        check_recovery(out)
        assert proc.poll() is None
    finally:
        stop_server(proc)
    assert "Traceback" not in log.read_text()


@pytest.fixture
def inprocess_server(tmp_path):
    """uvicorn serving the app in a thread of this process, so its objects can be inspected;
    its sockets have a small send buffer, so the kernel cannot hide a stalled client."""
    with serve_in_thread(Settings(data_dir=tmp_path), send_buffer=16 * 1024) as served:
        yield served


def test_a_silent_clients_outbox_stays_bounded(inprocess_server):
    app, port = inprocess_server
    samples: list[tuple[int, int, int, int]] = []

    def sample() -> None:
        for s in list(app.state.sessions.sessions.values()):
            for box in list(s.bus.outboxes):
                if box.n_frames or box.cursor < s.timeline.last_scalar_step:
                    lag = s.timeline.last_scalar_step - box.cursor
                    samples.append((len(box.items), box.n_frames, box.n_texts, lag))

    out = stall_and_recover(port, sample)
    frames = check_recovery(out)
    # Old frames were dropped, not queued: the viewer saw them all, the driver a few.
    assert len(out["viewer_frames"]) > 3 * len(frames), (len(out["viewer_frames"]), frames)
    assert samples
    items, frames, texts, lag = (max(col) for col in zip(*samples, strict=True))
    assert lag > SPEED * STALL_S / 4  # the driver fell thousands of steps behind...
    assert frames <= Outbox.MAX_FRAMES  # ...while its outbox held a few frames at most
    assert texts <= 8 and items <= Outbox.MAX_FRAMES + 8
    sessions = app.state.sessions.sessions.values()
    assert not [b for s in sessions for b in s.bus.outboxes if b.overflowed]
