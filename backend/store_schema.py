"""The saved-runs tables, once for SQLAlchemy Core and once as SQLite's own DDL.

The queries in backend/store.py are built from the `Table` objects here, so SQLite and
PostgreSQL go through one code path. PostgreSQL gets the tables from `metadata.create_all`
(LargeBinary = bytea) and its schema version in `store_schema`. An SQLite file keeps being
made from `_SCHEMA` (the DDL every existing file was made with, its comments included) and
keeps its version in PRAGMA user_version, so the embedded store's file stays as it was.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from sqlalchemy import (
    BigInteger,
    Column,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
)
from sqlalchemy.engine import Connection

log = logging.getLogger("shaomai.store")


class StoreError(RuntimeError):
    """The store cannot be opened (damaged file, newer schema); the message says what to do."""


class StoreUnavailable(StoreError):
    """The database does not answer (PostgreSQL down or unreachable, an SQLite disk gone or
    full): HTTP 503, protocol `busy` with key err.store_unavailable. Try again later."""


SCHEMA_VERSION = 2  # SQLite: PRAGMA user_version; PostgreSQL: store_schema.version (2: kept)

metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("id", Text, primary_key=True),
    Column("lab", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("params", Text, nullable=False),  # JSON object
    Column("seed", BigInteger, nullable=False),
    Column("step", BigInteger, nullable=False),
    Column("created", Double, nullable=False),  # unix time
    Column("scalars", Text, nullable=False),  # JSON, columnar
    Column("weights", LargeBinary, nullable=False),  # torch.save of the lab's state_dict
    Column("token_hash", Text, nullable=False),
    Column("scalar_steps", BigInteger, nullable=False),
    Column("frames", BigInteger, nullable=False),
    Column("frames_bytes", BigInteger, nullable=False),
    Column("weights_bytes", BigInteger, nullable=False),
    Column("kept", Text, nullable=False, server_default="[]"),  # JSON: protocol.KeptRun
    Index("runs_created", "created"),
)
frames = Table(
    "frames",
    metadata,
    Column("run_id", Text, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("seq", BigInteger, primary_key=True),  # order in the timeline
    Column("step", BigInteger, nullable=False),
    Column("data", LargeBinary, nullable=False),  # the frame's binary wire encoding, as sent
)
run_sessions = Table(
    "run_sessions",
    metadata,
    Column("run_id", Text, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("session_hash", Text, nullable=False),
    Column("autosave", Integer, nullable=False),  # 1: that session's autosave
    Index("run_sessions_session", "session_hash"),
)
run_classes = Table(
    "run_classes",
    metadata,
    Column("run_id", Text, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("code", Text, nullable=False),
    Index("run_classes_code", "code"),
)
# PostgreSQL only (SQLite has PRAGMA user_version): one row, the schema's version.
version_metadata = MetaData()
store_schema = Table("store_schema", version_metadata, Column("version", Integer, nullable=False))

SUMMARY_COLUMNS = [
    "id",
    "lab",
    "name",
    "seed",
    "step",
    "created",
    "scalar_steps",
    "frames",
    "frames_bytes",
    "weights_bytes",
]

# -- SQLite ----------------------------------------------------------------------------------
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
_MIGRATE_1_2 = "ALTER TABLE runs ADD COLUMN kept TEXT NOT NULL DEFAULT '[]';"

# Every connection, before anything else (the connect event). auto_vacuum first: it only
# takes on a file with no tables yet, so a delete can give pages back (incremental_vacuum).
SQLITE_PRAGMAS = (
    "PRAGMA auto_vacuum = INCREMENTAL",
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",  # a committed save survives a power cut too
    "PRAGMA foreign_keys = ON",
    f"PRAGMA journal_size_limit = {64 * 2**20}",  # a big save's WAL shrinks back
    "PRAGMA busy_timeout = 5000",
)


# -- SQLite: the connect and begin events, the file's schema ---------------------------------
def sqlite_connect(dbapi_conn: sqlite3.Connection, _record) -> None:
    for pragma in SQLITE_PRAGMAS:
        dbapi_conn.execute(pragma).fetchall()


def sqlite_begin(conn: Connection) -> None:
    # The driver's own BEGIN is off (isolation_level=None): this one says which kind.
    conn.exec_driver_sql(f"BEGIN {conn.get_execution_options().get('sqlite_begin', 'DEFERRED')}")


def sqlite_schema(db: sqlite3.Connection, path: Path) -> None:
    """The integrity check, the version check, a new file's tables or the 1 -> 2 migration."""
    problems = [row[0] for row in db.execute("PRAGMA integrity_check")]
    if problems != ["ok"]:
        log.error("saved-runs database %s failed its integrity check: %s", path, problems)
        raise StoreError(
            f"the saved-runs database {path} is damaged ({'; '.join(problems[:5])}); "
            "restore it from a backup, or move it aside to start with an empty store"
        )
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"the saved-runs database {path} was written by a newer Shaomai Lab "
            f"(schema {version}, this one knows {SCHEMA_VERSION}); upgrade the app"
        )
    if version == 0:  # a new file
        db.executescript(f"BEGIN; {_SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
    elif version < SCHEMA_VERSION:  # 1 -> 2: kept runs (its saved runs keep none)
        log.info("saved-runs store %s: schema %d -> %d", path, version, SCHEMA_VERSION)
        db.executescript(f"BEGIN; {_MIGRATE_1_2} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
    db.executescript(f"BEGIN; {_SESSIONS_SCHEMA} COMMIT;")
