"""`python -m bench.rawserver --port P`: a bare FastAPI app, the machine's websocket ceiling.

`/ws/{size}` waits for one text, then sends the same `size` bytes again and again, as fast
as the socket takes them, until the client leaves; `/echo` answers each text with itself. Same uvicorn settings as
the app (no per-message deflate), no sessions, no torch.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib

import uvicorn
from fastapi import FastAPI, WebSocket, WebSocketDisconnect

app = FastAPI()


@app.get("/api/health")
def health() -> dict:
    return {"status": "ok"}


@app.websocket("/ws/{size}")
async def blast(ws: WebSocket, size: int) -> None:
    await ws.accept()
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    try:
        await ws.receive_text()  # every client is connected: go
    except (WebSocketDisconnect, RuntimeError, OSError):
        return
    gone = asyncio.Event()

    async def watch() -> None:  # the client's close (or anything else) ends the stream
        with contextlib.suppress(Exception):
            await ws.receive()
        gone.set()

    watcher = asyncio.create_task(watch())
    try:
        while not gone.is_set():
            await ws.send_bytes(data)
            await asyncio.sleep(0)  # a send into a free buffer never yields: let others run
    except (WebSocketDisconnect, RuntimeError, OSError):
        pass
    finally:
        watcher.cancel()


@app.websocket("/echo")
async def echo(ws: WebSocket) -> None:
    await ws.accept()
    try:
        while True:
            await ws.send_text(await ws.receive_text())
    except (WebSocketDisconnect, RuntimeError, OSError):
        return


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8199)
    args = parser.parse_args()
    uvicorn.run(
        app, host=args.host, port=args.port, log_level="warning", ws_per_message_deflate=False
    )


if __name__ == "__main__":
    main()
