"""Saved runs: an embedded SQLite store under SHAOMAI_DATA_DIR (docs/deploy.md).

Crash safety comes from SQLite itself: a WAL journal with synchronous=FULL and one transaction
per save, so a kill -9 (or a power cut) mid-save leaves either the whole run or none of it,
and every earlier run intact. One connection, guarded by a lock: callers are the event loop
(through asyncio.to_thread) and session worker threads.

Weights are `torch.save` bytes read back with `torch.load(weights_only=True)`, never plain
pickle, so a crafted file cannot run code when it is opened.
"""

from __future__ import annotations

import argparse
import json
import logging
import secrets
import sqlite3
import threading
from pathlib import Path

from backend.saved_run import (  # re-exported: callers import a run's helpers from the store
    MAX_NAME_CHARS,
    MAX_RUN_BYTES,
    SavedRun,
    check_run,
    hash_token,
    scalars_from_columns,
    scalars_to_columns,
    token_matches,
)

log = logging.getLogger("shaomai.store")

STORE_FILENAME = "runs.db"  # under SHAOMAI_DATA_DIR
SCHEMA_VERSION = 2  # PRAGMA user_version (2: runs.kept)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id            TEXT PRIMARY KEY,
    lab           TEXT NOT NULL,
    name          TEXT NOT NULL,
    params        TEXT NOT NULL,     -- JSON object
    seed          INTEGER NOT NULL,
    step          INTEGER NOT NULL,
    created       REAL NOT NULL,     -- unix time
    scalars       TEXT NOT NULL,     -- JSON, columnar: {"steps": [...], "values": {name: [...]}}
    weights       BLOB NOT NULL,     -- torch.save of the lab's state_dict
    token_hash    TEXT NOT NULL,     -- sha256 hex of the driver token that may delete it
    scalar_steps  INTEGER NOT NULL,
    frames        INTEGER NOT NULL,
    frames_bytes  INTEGER NOT NULL,
    weights_bytes INTEGER NOT NULL,
    kept          TEXT NOT NULL DEFAULT '[]'  -- JSON: the runs kept beside it (protocol.KeptRun)
);
CREATE INDEX IF NOT EXISTS runs_created ON runs (created);
CREATE TABLE IF NOT EXISTS frames (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,          -- order in the timeline
    step   INTEGER NOT NULL,
    data   BLOB NOT NULL,             -- the frame's binary wire encoding, as sent
    PRIMARY KEY (run_id, seq)
);
"""
# Which live session each run was saved from, and its autosave slot. Made on every open, in
# any schema version: an older app ignores the table, so no version bump.
_SESSIONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS run_sessions (
    run_id       TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    session_hash TEXT NOT NULL,     -- sha256 hex of the id of the session it was saved from
    autosave     INTEGER NOT NULL   -- 1: that session's autosave (one slot a session)
);
CREATE INDEX IF NOT EXISTS run_sessions_session ON run_sessions (session_hash);
-- The class join code a shared session had, so its teacher's restore after a server
-- restart brings the class back under the same code (docs/protocol.md).
CREATE TABLE IF NOT EXISTS run_classes (
    run_id TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    code   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS run_classes_code ON run_classes (code);
"""
_SUMMARY_COLUMNS = (
    "id, lab, name, seed, step, created, scalar_steps, frames, frames_bytes, weights_bytes"
)


class StoreError(RuntimeError):
    """The store cannot be opened (damaged file, newer schema); the message says what to do."""


# -- the store -------------------------------------------------------------------------------
class RunStore:
    def __init__(self, path: Path, max_run_bytes: int = MAX_RUN_BYTES):
        self.path = Path(path)
        self.max_run_bytes = max_run_bytes
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # isolation_level=None: we issue BEGIN/COMMIT ourselves; a save is one transaction.
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the saved-runs database {self.path}: {exc}") from None
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            log.error("saved-runs database %s cannot be opened: %s", self.path, exc)
            damaged = "malformed" in str(exc) or "not a database" in str(exc)
            hint = (
                "restore it from a backup, or move it aside to start with an empty store"
                if damaged
                else f"check that the app may write to {self.path.parent} and the disk is not full"
            )
            raise StoreError(f"the saved-runs database {self.path}: {exc}; {hint}") from None
        except StoreError:
            self._db.close()
            raise

    def _open(self) -> None:
        db = self._db
        # Before any table exists, so a delete can give pages back (incremental_vacuum).
        db.execute("PRAGMA auto_vacuum = INCREMENTAL")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = FULL")  # a committed save survives a power cut too
        db.execute("PRAGMA foreign_keys = ON")
        db.execute(f"PRAGMA journal_size_limit = {64 * 2**20}")  # a big save's WAL shrinks back
        db.execute("PRAGMA busy_timeout = 5000")
        problems = [row[0] for row in db.execute("PRAGMA integrity_check")]
        if problems != ["ok"]:
            log.error("saved-runs database %s failed its integrity check: %s", self.path, problems)
            raise StoreError(
                f"the saved-runs database {self.path} is damaged ({'; '.join(problems[:5])}); "
                "restore it from a backup, or move it aside to start with an empty store"
            )
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the saved-runs database {self.path} was written by a newer Shaomai Lab "
                f"(schema {version}, this one knows {SCHEMA_VERSION}); upgrade the app"
            )
        if version == 0:  # a new file
            db.executescript(f"BEGIN; {_SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
        elif version < SCHEMA_VERSION:  # 1 -> 2: kept runs (its saved runs keep none)
            log.info("saved-runs store %s: schema %d -> %d", self.path, version, SCHEMA_VERSION)
            db.executescript(
                "BEGIN; ALTER TABLE runs ADD COLUMN kept TEXT NOT NULL DEFAULT '[]'; "
                f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            )
        db.executescript(f"BEGIN; {_SESSIONS_SCHEMA} COMMIT;")
        n = db.execute("SELECT count(*) FROM runs").fetchone()[0]
        log.info("saved-runs store %s opened: %d runs", self.path, n)

    def save(self, run: SavedRun) -> str:
        """Store a run in one transaction (all of it or nothing); returns its new id. An
        autosave replaces its session's last autosave in the same transaction."""
        check_run(run, self.max_run_bytes)
        run_id = secrets.token_urlsafe(9)
        scalars = json.dumps(scalars_to_columns(run.scalars), separators=(",", ":"))
        params = json.dumps(run.params, separators=(",", ":"), allow_nan=False)
        row = (
            run_id,
            run.lab,
            run.name,
            params,
            int(run.seed),
            int(run.step),
            float(run.created),
            scalars,
            bytes(run.weights),
            run.token_hash,
            len(run.scalars),
            len(run.frames),
            sum(len(data) for _, data in run.frames),
            len(run.weights),
            json.dumps(run.kept, separators=(",", ":"), allow_nan=False),
        )
        frames = [(run_id, i, int(step), bytes(data)) for i, (step, data) in enumerate(run.frames)]
        with self._lock, self._transaction():
            if run.autosave and run.session_hash:
                old = "SELECT run_id FROM run_sessions WHERE session_hash = ? AND autosave = 1"
                for (old_id,) in self._db.execute(old, (run.session_hash,)).fetchall():
                    self._db.execute("DELETE FROM frames WHERE run_id = ?", (old_id,))
                    self._db.execute("DELETE FROM runs WHERE id = ?", (old_id,))
            self._db.execute(f"INSERT INTO runs VALUES ({', '.join('?' * len(row))})", row)
            if run.session_hash:
                self._db.execute(
                    "INSERT INTO run_sessions VALUES (?, ?, ?)",
                    (run_id, run.session_hash, int(bool(run.autosave))),
                )
            if run.class_code:
                self._db.execute("INSERT INTO run_classes VALUES (?, ?)", (run_id, run.class_code))
            self._db.executemany("INSERT INTO frames VALUES (?, ?, ?, ?)", frames)
        log.info("run %s saved: %s at step %d, %d frames", run_id, run.lab, run.step, len(frames))
        return run_id

    def list(self, lab: str | None = None, limit: int = 1000, offset: int = 0) -> list[dict]:
        """Summaries (no blobs), newest first; runs saved by hand or imported (autosaves are
        found by their session: `of_session`)."""
        where = "WHERE id NOT IN (SELECT run_id FROM run_sessions WHERE autosave = 1)"
        where, args = (f"{where} AND lab = ?", [lab]) if lab else (where, [])
        sql = f"SELECT {_SUMMARY_COLUMNS} FROM runs {where} ORDER BY created DESC LIMIT ? OFFSET ?"
        with self._lock:
            cur = self._db.execute(sql, [*args, limit, offset])
            return [_summary(cur.description, row) for row in cur.fetchall()]

    def summary(self, run_id: str) -> dict | None:
        with self._lock:
            cur = self._db.execute(f"SELECT {_SUMMARY_COLUMNS} FROM runs WHERE id = ?", (run_id,))
            row = cur.fetchone()
            return None if row is None else _summary(cur.description, row)

    def of_session(self, session_id: str, limit: int = 10) -> list[dict]:
        """What was saved from the live session `session_id` (by hand, or its autosave),
        newest first: summaries with `autosave` (bool). Only who knows the id can ask."""
        sql = (
            f"SELECT {_SUMMARY_COLUMNS}, autosave FROM runs JOIN run_sessions ON run_id = id"
            " WHERE session_hash = ? ORDER BY created DESC LIMIT ?"
        )
        with self._lock:
            cur = self._db.execute(sql, (hash_token(session_id), limit))
            rows = [_summary(cur.description, row) for row in cur.fetchall()]
        for r in rows:
            r["autosave"] = bool(r["autosave"])
        return rows

    def rename(self, run_id: str, token: str, name: str) -> bool:
        """Rename if `token` is the driver token that saved it; False if not (or no such run).
        A renamed autosave becomes a run saved by hand (the next autosave leaves it)."""
        if len(name) > MAX_NAME_CHARS:
            raise ValueError(f"name: longer than {MAX_NAME_CHARS} characters")
        with self._lock:
            row = self._db.execute("SELECT token_hash FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None or not token_matches(row[0], token):
                return False
            with self._transaction():
                self._db.execute("UPDATE runs SET name = ? WHERE id = ?", (name, run_id))
                self._db.execute("UPDATE run_sessions SET autosave = 0 WHERE run_id = ?", (run_id,))
        log.info("run %s renamed", run_id)
        return True

    def get(self, run_id: str) -> SavedRun | None:
        with self._lock, self._transaction("DEFERRED"):  # one snapshot: the row and its frames
            row = self._db.execute(
                "SELECT id, lab, name, params, seed, step, created, scalars, weights, token_hash,"
                " kept FROM runs WHERE id = ?",
                (run_id,),
            ).fetchone()
            if row is None:
                return None
            frames = self._db.execute(
                "SELECT step, data FROM frames WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
            code = self._db.execute(
                "SELECT code FROM run_classes WHERE run_id = ?", (run_id,)
            ).fetchone()
        rid, lab, name, params, seed, step, created, scalars, weights, token_hash, kept = row
        return SavedRun(
            id=rid,
            lab=lab,
            name=name,
            params=json.loads(params),
            seed=seed,
            step=step,
            created=created,
            scalars=scalars_from_columns(json.loads(scalars)),
            frames=[(s, bytes(d)) for s, d in frames],
            weights=bytes(weights),
            token_hash=token_hash,
            kept=json.loads(kept),
            class_code=code[0] if code else "",
        )

    def classes(self, since: float) -> dict[str, str]:
        """Class codes of runs saved since `since` (unix time): code -> lab of its newest run.
        After a restart these classes wait for their teacher's restore."""
        sql = (
            "SELECT code, lab FROM run_classes JOIN runs ON id = run_id"
            " WHERE created >= ? ORDER BY created"
        )
        with self._lock:
            return dict(self._db.execute(sql, (since,)).fetchall())

    def delete(self, run_id: str, token: str) -> bool:
        """Delete if `token` is the driver token that saved it; False if not (or no such run)."""
        with self._lock:
            row = self._db.execute("SELECT token_hash FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row is None or not token_matches(row[0], token):
                return False
            with self._transaction():
                self._db.execute("DELETE FROM frames WHERE run_id = ?", (run_id,))
                self._db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
            self._db.execute("PRAGMA incremental_vacuum").fetchall()  # give pages back to the disk
        log.info("run %s deleted", run_id)
        return True

    def backup(self, dest: Path) -> None:
        """A consistent copy while the app runs (copying the file alone is not safe in WAL)."""
        out = sqlite3.connect(dest)
        try:
            with self._lock:
                self._db.backup(out)
        finally:
            out.close()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _transaction(self, mode: str = "IMMEDIATE") -> _Transaction:
        return _Transaction(self._db, mode)


class _Transaction:
    """BEGIN … COMMIT, or ROLLBACK on any error (the caller holds the lock)."""

    def __init__(self, db: sqlite3.Connection, mode: str):
        self.db, self.mode = db, mode

    def __enter__(self) -> None:
        self.db.execute(f"BEGIN {self.mode}")

    def __exit__(self, exc_type, exc, tb) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")


def _summary(description, row) -> dict:
    return {col[0]: value for col, value in zip(description, row, strict=True)}


def main() -> None:
    """`python -m backend.store check|backup DEST [--db PATH]`: for an operator's cron job."""
    from backend.config import get_settings

    parser = argparse.ArgumentParser(prog="python -m backend.store")
    parser.add_argument("command", choices=["check", "backup"])
    parser.add_argument("dest", nargs="?", type=Path, help="backup file to write")
    parser.add_argument("--db", type=Path, default=get_settings().data_dir / STORE_FILENAME)
    args = parser.parse_args()
    if args.command == "backup" and args.dest is None:
        parser.error("backup needs a destination file")
    if not args.db.exists():
        parser.error(f"no saved-runs database at {args.db}")
    logging.basicConfig(level="INFO", format="%(levelname)s %(message)s")
    try:
        store = RunStore(args.db)  # opening runs the integrity check
    except StoreError as exc:
        log.error("%s", exc)
        raise SystemExit(1) from None
    try:
        if args.command == "backup":
            store.backup(args.dest)
            log.info("backup of %s written to %s", args.db, args.dest)
        else:
            log.info("%s passed its integrity check", args.db)
    finally:
        store.close()


if __name__ == "__main__":
    main()
