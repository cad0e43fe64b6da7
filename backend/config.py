"""Settings, read from the environment with the prefix SHAOMAI_ (SHAOMAI_PORT=9000)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SHAOMAI_")

    host: str = "127.0.0.1"
    port: int = 8000
    data_dir: Path = Path("data")
    # The address students use, for join links and QR codes (default: the address the
    # teacher's browser used — set this when the teacher opens the app as localhost).
    public_url: str = ""
    log_level: str = "info"
    # A teacher's own lessons (docs/lessons.md), listed beside the built-in ones; "" = none.
    lessons_dir: Path | None = None

    # Hosted (docs/deploy.md): several replicas behind nginx. Unset = the embedded default:
    # one process, saved runs in SQLite under data_dir, shared state in memory.
    database_url: str = ""  # e.g. postgresql+psycopg://shaomai@db/shaomai (SQLAlchemy URL)
    redis_url: str = ""  # e.g. redis://redis:6379/0: join codes, owners, limits across replicas
    replica: str = ""  # this replica's name in /api/health, /metrics and Redis (default: host:port)

    # Limits. Over a cap is an error (`busy`, `too_large`), never an out-of-memory.
    max_sessions: int = 64
    # Sessions a page opened itself, per address. A school NAT puts a class on one address:
    # students' forks of a shared session are not counted here but per class (below).
    max_sessions_per_ip: int = 40
    max_session_mb: float = 512.0  # estimated model + activations + timeline of one session
    max_message_bytes: int = 256 * 1024  # room for 200 KB of pasted text in a `set`
    max_steps_per_s: float = (
        2000.0  # play speed cap; cheap labs run fast, big ones run as fast as they can
    )
    max_step_count: int = 10_000  # one `step` command
    max_steps: int = 200_000  # a session's lifetime in steps (scalars are kept whole)
    frame_fps: float = 30.0  # tensor frames per second while playing; scalars go out for every step
    timeline_mb: float = 64.0  # recorded frames per session for seek
    max_run_mb: float = 256.0  # one saved run (weights + frames + scalars)
    max_import_mb: float = 128.0  # one imported run export (JSON)
    messages_per_s: float = 50.0  # per connection, averaged; bursts up to 2 s worth
    # WRONG join codes answered per address per minute, a third of it per browser (right ones
    # are not counted, so a class of hundreds behind one address joins at once); past it a
    # lookup waits its turn, at most join_wait_s, whether its code is right or wrong.
    join_attempts_per_min: int = 30
    join_wait_s: float = 20.0
    sessions_per_ip_per_min: int = (
        60  # new sessions per address per minute (forks of a class aside)
    )
    # Students' forks of one shared session: alive at once, and made per minute. The server's
    # own cap (max_sessions) still bounds them all; raise it for a big class (docs/deploy.md).
    max_forks_per_class: int = 400
    class_forks_per_min: int = 600
    # Every live session that moved is saved into its autosave slot this often (and when it is
    # shared), so a server restart loses at most this much; 0 turns autosave off.
    autosave_s: float = 180.0
    # A session with no connection is kept this long for a rejoin, then reaped.
    idle_grace_s: float = 300.0
    reap_interval_s: float = 10.0
    device: str = "auto"  # auto = cuda when available, else cpu
    step_slots: int = 0  # lab steps running at once across sessions (0: the usable cores)
    # Frames carry `t`, the server's Unix time when the frame was encoded, so a client on
    # the same host can measure how late a frame arrives (the benchmark suite turns it on).
    frame_clock: bool = False
    # Each session's lab in a process of its own (backend/session_process.py): a lecture
    # hall's fan-out and its training no longer share one GIL. Every session then holds
    # memory of its own (docs/architecture.md, "Sessions and threads").
    session_process: bool = False
    # A shared session's lab moves into a process of its own at its share (a class's only:
    # a learner alone keeps the quick open and one process's memory). Moot when
    # session_process is on.
    class_process: bool = True
    # uvicorn's websocket implementation: the sans-I/O one sends a lecture hall more frames
    # with less memory than the legacy one (docs/benchmarks.md).
    ws_impl: Literal["websockets", "websockets-sansio", "wsproto"] = "websockets-sansio"
    # With the sans-I/O one, a frame or text with nothing queued ahead of it is written
    # straight to each viewer's socket, framed once (backend/send_now.py); off: everything
    # through each connection's sender task.
    direct_writes: bool = True

    # Security (docs/security.md). Pages from other origins may not open the websocket.
    allowed_origins: list[str] = []  # besides the app's own origin and localhost
    # Who may embed the app in an iframe (CSP frame-ancestors), e.g. "'self' https://blog.example".
    frame_ancestors: str = "'self'"


@lru_cache
def get_settings() -> Settings:
    return Settings()
