"""Saved runs through SQLAlchemy Core: an SQLite file under SHAOMAI_DATA_DIR by default, or
the PostgreSQL database SHAOMAI_DATABASE_URL names, where every replica sees every run
(docs/deploy.md). One code path for both; the tables are in backend/store_schema.py.

Crash safety comes from the database: on SQLite a WAL journal with synchronous=FULL (set on
every connection by the connect event) and one transaction per save, so a kill -9 (or a
power cut) mid-save leaves either the whole run or none of it, and every earlier run intact;
PostgreSQL gives the same per transaction. SQLite's calls are serialised by a lock (callers
are the event loop through asyncio.to_thread and session worker threads); PostgreSQL's go
through a pool that pings a connection before using it, so a database that went away and
came back is used again at once. A database that does not answer is `StoreUnavailable`:
saving then fails with a message the page shows, and the session keeps running.

Weights are `torch.save` bytes read back with `torch.load(weights_only=True)`, never plain
pickle, so a crafted file cannot run code when it is opened.
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import create_engine, delete, event, exc, func, insert, select, update
from sqlalchemy.engine import Connection, make_url

from backend.saved_run import (  # re-exported: callers import a run's helpers from the store
    MAX_NAME_CHARS,
    MAX_RUN_BYTES,
    SavedRun,
    check_name,
    check_run,
    hash_token,
    scalars_from_columns,
    scalars_to_columns,
    token_matches,
)
from backend.store_schema import (  # _SCHEMA: the SQLite DDL (tests make a schema-1 file)
    _SCHEMA,
    SCHEMA_VERSION,
    SUMMARY_COLUMNS,
    StoreError,
    StoreUnavailable,
    frames,
    metadata,
    run_classes,
    run_sessions,
    runs,
    sqlite_begin,
    sqlite_connect,
    sqlite_schema,
    store_schema,
    version_metadata,
)

if TYPE_CHECKING:
    from backend.config import Settings

__all__ = ["_SCHEMA", "MAX_NAME_CHARS", "SCHEMA_VERSION", "RunStore", "StoreError"]
__all__ += ["StoreUnavailable"]

log = logging.getLogger("shaomai.store")

STORE_FILENAME = "runs.db"  # under SHAOMAI_DATA_DIR
_SUMMARY = [runs.c[name] for name in SUMMARY_COLUMNS]
_PG_LOCK = 0x5348_414F  # pg_advisory_xact_lock key: one replica creates the tables at a time
UNAVAILABLE = (
    "saved runs are unavailable just now: the database does not answer; the session keeps "
    "running, try again in a minute"
)


def masked(url: str) -> str:
    """A database URL fit for a log: the password as ***."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL: say nothing of it
        return "<database url>"


# -- the store -------------------------------------------------------------------------------
class RunStore:
    def __init__(self, where: Path | str, max_run_bytes: int = MAX_RUN_BYTES):
        """`where`: an SQLite file's path, or an SQLAlchemy URL (sqlite:///…, postgresql+
        psycopg://user:password@host/db)."""
        self.max_run_bytes = max_run_bytes
        url = str(where) if isinstance(where, str) and "://" in where else None
        parsed = make_url(url) if url else None
        self.sqlite = parsed is None or parsed.get_backend_name() == "sqlite"
        if self.sqlite:
            self.path: Path | None = Path(parsed.database if parsed else where)
            self.url = f"sqlite:///{self.path}"
            self.where = str(self.path)
            self._lock: contextlib.AbstractContextManager = threading.Lock()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.engine = create_engine(
                self.url,
                connect_args={"isolation_level": None, "check_same_thread": False},
                hide_parameters=True,
            )
            event.listen(self.engine, "connect", sqlite_connect)
            event.listen(self.engine, "begin", sqlite_begin)
            self._open_sqlite()
        else:
            self.path, self.url, self.where = None, url, masked(url)
            self._lock = contextlib.nullcontext()
            args = {} if "connect_timeout" in parsed.query else {"connect_timeout": 5}
            self.engine = create_engine(
                url, pool_pre_ping=True, hide_parameters=True, connect_args=args
            )
            self._ready = threading.Lock()  # held while the schema is made (at most once)
            self._opened = False
            try:
                self._open_pg()
            except StoreUnavailable:  # start anyway: saving says so until it answers
                log.warning("saved-runs database %s does not answer yet", self.where)
            except BaseException:  # a newer schema: no store, and no connection left open
                self.engine.dispose()
                raise

    @classmethod
    def from_settings(cls, settings: Settings) -> RunStore:
        """SHAOMAI_DATABASE_URL when set, else the SQLite file runs.db under data_dir."""
        where = settings.database_url or settings.data_dir / STORE_FILENAME
        return cls(where, int(settings.max_run_mb * 2**20))

    # -- opening ---------------------------------------------------------------------------
    def _open_sqlite(self) -> None:
        try:
            with self.engine.connect() as conn:
                sqlite_schema(conn.connection.driver_connection, self.path)
                n = conn.scalar(select(func.count()).select_from(runs))
                conn.commit()
        except StoreError:
            self.engine.dispose()
            raise
        except (exc.DBAPIError, sqlite3.DatabaseError) as e:
            self.engine.dispose()
            err = getattr(e, "orig", None) or e
            log.error("saved-runs database %s cannot be opened: %s", self.path, err)
            damaged = "malformed" in str(err) or "not a database" in str(err)
            hint = (
                "restore it from a backup, or move it aside to start with an empty store"
                if damaged
                else f"check that the app may write to {self.path.parent} and the disk is not full"
            )
            raise StoreError(f"the saved-runs database {self.path}: {err}; {hint}") from None
        log.info("saved-runs store %s opened: %d runs", self.path, n)

    def _open_pg(self) -> None:
        """Make the tables (once, whichever replica comes first) and check the version."""
        with self._ready, self._errors():
            if self._opened:
                return
            with self.engine.begin() as conn:
                conn.execute(select(func.pg_advisory_xact_lock(_PG_LOCK)))
                version_metadata.create_all(conn)
                version = conn.scalar(select(store_schema.c.version))
                if version is not None and version > SCHEMA_VERSION:
                    raise StoreError(
                        f"the saved-runs database {self.where} was written by a newer Shaomai "
                        f"Lab (schema {version}, this one knows {SCHEMA_VERSION}); upgrade the app"
                    )
                metadata.create_all(conn)
                if version is None:
                    conn.execute(insert(store_schema).values(version=SCHEMA_VERSION))
                n = conn.scalar(select(func.count()).select_from(runs))
            self._opened = True
        log.info("saved-runs store %s opened: %d runs", self.where, n)

    # -- transactions and errors -----------------------------------------------------------
    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """A database that does not answer -> StoreUnavailable (the log names it, masked)."""
        try:
            yield
        except (exc.OperationalError, exc.InterfaceError, exc.TimeoutError) as e:
            raise self._unavailable(e) from None
        except exc.DBAPIError as e:
            if e.connection_invalidated:
                raise self._unavailable(e) from None
            raise

    def _unavailable(self, e: Exception) -> StoreUnavailable:
        err = str(getattr(e, "orig", None) or e).strip().splitlines()
        log.warning("saved-runs database %s: %s", self.where, err[0] if err else type(e).__name__)
        return StoreUnavailable(UNAVAILABLE)

    @contextlib.contextmanager
    def _tx(self, write: bool = False, snapshot: bool = False) -> Iterator[Connection]:
        """One transaction: SQLite BEGIN IMMEDIATE for a write (else DEFERRED); on PostgreSQL
        REPEATABLE READ for a `snapshot` (a run and its frames as of one moment)."""
        if not self.sqlite and not self._opened:
            self._open_pg()
        with self._lock, self._errors(), self.engine.connect() as conn:
            if self.sqlite:
                conn.execution_options(sqlite_begin="IMMEDIATE" if write else "DEFERRED")
            elif snapshot:
                conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                yield conn

    # -- runs ------------------------------------------------------------------------------
    def save(self, run: SavedRun) -> str:
        """Store a run in one transaction (all of it or nothing); returns its new id. An
        autosave replaces its session's last autosave in the same transaction."""
        check_run(run, self.max_run_bytes)
        run_id = secrets.token_urlsafe(9)
        row = {
            "id": run_id,
            "lab": run.lab,
            "name": run.name,
            "params": json.dumps(run.params, separators=(",", ":"), allow_nan=False),
            "seed": int(run.seed),
            "step": int(run.step),
            "created": float(run.created),
            "scalars": json.dumps(scalars_to_columns(run.scalars), separators=(",", ":")),
            "weights": bytes(run.weights),
            "token_hash": run.token_hash,
            "scalar_steps": len(run.scalars),
            "frames": len(run.frames),
            "frames_bytes": sum(len(data) for _, data in run.frames),
            "weights_bytes": len(run.weights),
            "kept": json.dumps(run.kept, separators=(",", ":"), allow_nan=False),
        }
        frame_rows = [
            {"run_id": run_id, "seq": i, "step": int(step), "data": bytes(data)}
            for i, (step, data) in enumerate(run.frames)
        ]
        with self._tx(write=True) as conn:
            if run.autosave and run.session_hash:
                old = select(run_sessions.c.run_id).where(
                    run_sessions.c.session_hash == run.session_hash, run_sessions.c.autosave == 1
                )
                old_ids = conn.scalars(old).all()
                if old_ids:
                    conn.execute(delete(frames).where(frames.c.run_id.in_(old_ids)))
                    conn.execute(delete(runs).where(runs.c.id.in_(old_ids)))
            conn.execute(insert(runs), row)
            if run.session_hash:
                autosave = int(bool(run.autosave))
                conn.execute(
                    insert(run_sessions),
                    {"run_id": run_id, "session_hash": run.session_hash, "autosave": autosave},
                )
            if run.class_code:
                conn.execute(insert(run_classes), {"run_id": run_id, "code": run.class_code})
            if frame_rows:
                conn.execute(insert(frames), frame_rows)
        log.info(
            "run %s saved: %s at step %d, %d frames", run_id, run.lab, run.step, len(frame_rows)
        )
        return run_id

    def list(self, lab: str | None = None, limit: int = 1000, offset: int = 0) -> list[dict]:
        """Summaries (no blobs), newest first; runs saved by hand or imported (autosaves are
        found by their session: `of_session`)."""
        autosaves = select(run_sessions.c.run_id).where(run_sessions.c.autosave == 1)
        q = select(*_SUMMARY).where(runs.c.id.not_in(autosaves))
        if lab:
            q = q.where(runs.c.lab == lab)
        q = q.order_by(runs.c.created.desc()).limit(limit).offset(offset)
        with self._tx() as conn:
            return [row._asdict() for row in conn.execute(q)]

    def summary(self, run_id: str) -> dict | None:
        with self._tx() as conn:
            row = conn.execute(select(*_SUMMARY).where(runs.c.id == run_id)).first()
        return None if row is None else row._asdict()

    def of_session(self, session_id: str, limit: int = 10) -> list[dict]:
        """What was saved from the live session `session_id` (by hand, or its autosave),
        newest first: summaries with `autosave` (bool). Only who knows the id can ask."""
        of = hash_token(session_id)  # an SQL lookup by the hash, not a comparison in Python
        q = (
            select(*_SUMMARY, run_sessions.c.autosave)
            .join(run_sessions, run_sessions.c.run_id == runs.c.id)
            .where(run_sessions.c.session_hash == of)
            .order_by(runs.c.created.desc())
            .limit(limit)
        )
        with self._tx() as conn:
            rows = [row._asdict() for row in conn.execute(q)]
        for r in rows:
            r["autosave"] = bool(r["autosave"])
        return rows

    def rename(self, run_id: str, token: str, name: str) -> bool:
        """Rename if `token` is the driver token that saved it; False if not (or no such run).
        A renamed autosave becomes a run saved by hand (the next autosave leaves it)."""
        check_name(name)
        with self._tx(write=True) as conn:
            held = conn.scalar(select(runs.c.token_hash).where(runs.c.id == run_id))
            if held is None or not token_matches(held, token):
                return False
            conn.execute(update(runs).where(runs.c.id == run_id).values(name=name))
            conn.execute(
                update(run_sessions).where(run_sessions.c.run_id == run_id).values(autosave=0)
            )
        log.info("run %s renamed", run_id)
        return True

    def get(self, run_id: str) -> SavedRun | None:
        cols = [
            "id",
            "lab",
            "name",
            "params",
            "seed",
            "step",
            "created",
            "scalars",
            "weights",
            "token_hash",
            "kept",
        ]
        with self._tx(snapshot=True) as conn:  # one snapshot: the row and its frames
            row = conn.execute(select(*(runs.c[c] for c in cols)).where(runs.c.id == run_id))
            row = row.first()
            if row is None:
                return None
            got = conn.execute(
                select(frames.c.step, frames.c.data)
                .where(frames.c.run_id == run_id)
                .order_by(frames.c.seq)
            ).all()
            code = conn.scalar(select(run_classes.c.code).where(run_classes.c.run_id == run_id))
        return SavedRun(
            id=row.id,
            lab=row.lab,
            name=row.name,
            params=json.loads(row.params),
            seed=row.seed,
            step=row.step,
            created=row.created,
            scalars=scalars_from_columns(json.loads(row.scalars)),
            frames=[(s, bytes(d)) for s, d in got],
            weights=bytes(row.weights),
            token_hash=row.token_hash,
            kept=json.loads(row.kept),
            class_code=code or "",
        )

    def classes(self, since: float) -> dict[str, str]:
        """Class codes of runs saved since `since` (unix time): code -> lab of its newest run.
        After a restart these classes wait for their teacher's restore."""
        q = (
            select(run_classes.c.code, runs.c.lab)
            .join(runs, runs.c.id == run_classes.c.run_id)
            .where(runs.c.created >= since)
            .order_by(runs.c.created)
        )
        with self._tx() as conn:
            return {code: lab for code, lab in conn.execute(q)}

    def delete(self, run_id: str, token: str) -> bool:
        """Delete if `token` is the driver token that saved it; False if not (or no such run)."""
        with self._tx(write=True) as conn:
            held = conn.scalar(select(runs.c.token_hash).where(runs.c.id == run_id))
            if held is None or not token_matches(held, token):
                return False
            conn.execute(delete(frames).where(frames.c.run_id == run_id))
            conn.execute(delete(runs).where(runs.c.id == run_id))
        if self.sqlite:  # give pages back to the disk, outside the transaction
            with self._lock, self._errors(), self.engine.connect() as conn:
                conn.connection.driver_connection.execute("PRAGMA incremental_vacuum").fetchall()
        log.info("run %s deleted", run_id)
        return True

    def backup(self, dest: Path) -> None:
        """A consistent copy while the app runs (copying the file alone is not safe in WAL).
        SQLite only: back a PostgreSQL database up with pg_dump."""
        if not self.sqlite:
            raise StoreError("backup: the saved runs are in PostgreSQL; use pg_dump")
        out = sqlite3.connect(dest)
        try:
            with self._lock, self.engine.connect() as conn:
                conn.connection.driver_connection.backup(out)
        finally:
            out.close()

    def close(self) -> None:
        with self._lock:
            self.engine.dispose()


if __name__ == "__main__":  # python -m backend.store check|backup (backend/store_cli.py)
    from backend.store_cli import main

    main()
