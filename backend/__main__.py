"""`python -m backend --host H --port P`: serve the app with uvicorn."""

from __future__ import annotations

import argparse
import logging

import uvicorn

from backend.config import get_settings


def main() -> None:
    settings = get_settings()
    parser = argparse.ArgumentParser(prog="shaomai", description="Serve Shaomai Lab.")
    parser.add_argument("--host", default=settings.host)
    parser.add_argument("--port", type=int, default=settings.port)
    parser.add_argument("--log-level", default=settings.log_level)
    args = parser.parse_args()
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("shaomai").info("Shaomai Lab on http://%s:%d", args.host, args.port)
    uvicorn.run(
        "backend.app:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        # Compression costs ~40x in frame throughput for tensor payloads (DESIGN.md).
        ws_per_message_deflate=False,
        # Larger than our own cap on purpose: an oversized message gets an `error` reply
        # and the connection stays open, instead of a bare close by the server.
        ws_max_size=16 * 1024 * 1024,
    )


if __name__ == "__main__":
    main()
