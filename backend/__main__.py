"""`python -m backend --host H --port P`: serve the app with uvicorn, draining on SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import logging

import uvicorn

from backend.app import create_app
from backend.config import get_settings
from backend.ws_direct import DirectWritesProtocol

log = logging.getLogger("shaomai")


class DrainingServer(uvicorn.Server):
    """On SIGTERM/SIGINT, tell every client `shutting_down` before uvicorn closes sockets."""

    draining = False

    def handle_exit(self, sig, frame) -> None:
        sessions = getattr(self.config.app.state, "sessions", None)
        if sessions is None or self.draining or self.should_exit:
            return super().handle_exit(sig, frame)
        self.draining = True
        log.info("shutting down: telling %d sessions", len(sessions.sessions))
        sessions.announce_shutdown()
        # Give the connections' sender tasks a moment to deliver it, then stop as usual.
        asyncio.get_running_loop().call_later(0.3, super().handle_exit, sig, frame)


def main() -> None:
    settings = get_settings()
    parser = argparse.ArgumentParser(prog="shaomai", description="Serve Shaomai Lab.")
    parser.add_argument("--host", default=settings.host)
    parser.add_argument("--port", type=int, default=settings.port)
    parser.add_argument("--log-level", default=settings.log_level)
    args = parser.parse_args()
    # The address it serves is part of what it reports (the default replica name host:port).
    settings = settings.model_copy(update={"host": args.host, "port": args.port})
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    log.info("Shaomai Lab on http://%s:%d", args.host, args.port)
    config = uvicorn.Config(
        create_app(settings),
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        # Compression costs ~40x in frame throughput for tensor payloads (DESIGN.md).
        # Its sans-I/O protocol, plus the extension that writes frames framed once.
        ws=DirectWritesProtocol if settings.ws_impl == "websockets-sansio" else settings.ws_impl,
        ws_per_message_deflate=False,
        # Larger than our own cap on purpose: an oversized message gets an `error` reply
        # and the connection stays open, instead of a bare close by the server.
        ws_max_size=16 * 1024 * 1024,
        # Exit within 10 s of SIGTERM even with clients connected.
        timeout_graceful_shutdown=5,
        # A phone that stops reading for a minute keeps its connection (and catches up).
        ws_ping_interval=20,
        ws_ping_timeout=90,
    )
    DrainingServer(config).run()


if __name__ == "__main__":
    main()
