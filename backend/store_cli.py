"""`python -m backend.store check|backup`: the saved-runs store's commands for an operator."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from backend.store import STORE_FILENAME, RunStore, StoreError, StoreUnavailable

log = logging.getLogger("shaomai.store")


def main() -> None:
    """`python -m backend.store check|backup DEST [--db PATH | --url URL]`: for an operator's
    cron job. Without either, the app's own store (SHAOMAI_DATABASE_URL, else the file)."""
    from backend.config import get_settings

    settings = get_settings()
    parser = argparse.ArgumentParser(prog="python -m backend.store")
    parser.add_argument("command", choices=["check", "backup"])
    parser.add_argument("dest", nargs="?", type=Path, help="backup file to write")
    parser.add_argument("--db", type=Path, help="an SQLite file (default: data_dir/runs.db)")
    parser.add_argument("--url", help="a database URL (default: SHAOMAI_DATABASE_URL)")
    args = parser.parse_args()
    url = args.url or (None if args.db else settings.database_url) or None
    db = args.db or settings.data_dir / STORE_FILENAME
    if args.command == "backup" and args.dest is None:
        parser.error("backup needs a destination file")
    if url is None and not db.exists():
        parser.error(f"no saved-runs database at {db}")
    logging.basicConfig(level="INFO", format="%(levelname)s %(message)s")
    try:
        store = RunStore(url or db)  # opening runs the integrity check (SQLite)
        if not store.sqlite and not store._opened:
            raise StoreUnavailable(f"the saved-runs database {store.where} does not answer")
    except StoreError as e:
        log.error("%s", e)
        raise SystemExit(1) from None
    try:
        if args.command == "backup":
            store.backup(args.dest)
            log.info("backup of %s written to %s", store.where, args.dest)
        else:
            log.info("%s passed its integrity check", store.where)
    except StoreError as e:
        log.error("%s", e)
        raise SystemExit(1) from None
    finally:
        store.close()
