"""Save a live session into the run store, and reopen a saved run as a session."""

from __future__ import annotations

import asyncio
import time

from backend import protocol, wire
from backend.admission import SessionError
from backend.manager import SessionManager
from backend.saved_run import (
    RunTooLarge,
    SavedRun,
    hash_token,
    pack_weights,
    token_matches,
    unpack_weights,
)
from backend.sessions import Session
from backend.store import RunStore, StoreUnavailable

# The store's database does not answer (PostgreSQL down): the page shows this, in its
# language, and the session keeps running; the next save tries again.
STORE_KEY = "err.store_unavailable"


def unavailable(exc: StoreUnavailable) -> SessionError:
    return SessionError("busy", str(exc), key=STORE_KEY)


def default_name(lab: str, step: int) -> str:
    """A run saved without a name (the catalog shows it in the page's language)."""
    return f"{lab} · step {step}"


async def snapshot_run(s: Session, name: str = "", *, autosave: bool = False) -> SavedRun:
    """The session as a run: params, seed, every scalar, the (thinned) timeline, the
    weights and the kept runs (for the store, or straight into an export file)."""
    tl = s.timeline
    scalars = list(zip(tl.scalar_steps, tl.scalar_values, strict=True))
    frames = list(zip(tl.frame_steps, tl.frames, strict=True))
    step = s.step
    state = await s.copy_state()
    weights = await asyncio.to_thread(pack_weights, state)
    return SavedRun(
        id="",
        lab=s.lab_cls.id,
        name=name or default_name(s.lab_cls.id, step),
        params=s.params.model_dump(mode="json"),
        seed=s.seed,
        step=step,
        created=time.time(),
        scalars=scalars,
        frames=frames,
        weights=weights,
        token_hash=hash_token(s.token),
        kept=[protocol.dump(k) for k in s.kept],
        session_hash=hash_token(s.id),
        autosave=autosave,
        class_code=s.share_code or "",
    )


async def save_session(store: RunStore, s: Session, name: str, *, autosave: bool = False) -> str:
    """Save the session in one transaction; an autosave replaces the session's last one."""
    run = await snapshot_run(s, name, autosave=autosave)
    try:
        return await asyncio.to_thread(store.save, run)
    except RunTooLarge as exc:
        raise SessionError("too_large", str(exc)) from None
    except StoreUnavailable as exc:
        raise unavailable(exc) from None
    except ValueError as exc:  # a name the store cannot hold (a NUL)
        raise SessionError("bad_message", str(exc), "name") from None


async def open_saved(
    sessions: SessionManager,
    store: RunStore,
    run_id: str,
    mode: str,
    ip: str,
    session_id: str | None = None,
    token: str | None = None,
) -> Session:
    """A session from a saved run. A resume with the driver token the run was saved under
    (its teacher's page after a server restart) takes back the class code it had."""
    try:
        run = await asyncio.to_thread(store.get, run_id)
    except StoreUnavailable as exc:
        raise unavailable(exc) from None
    if run is None:
        raise SessionError("not_found", "no saved run with this id", "run", "err.no_run")
    state = await asyncio.to_thread(unpack_weights, run.weights)
    # Saved frames carry the run number of the session that recorded them; this is run 0.
    frames = [(st, wire.patch_header(data, {"run": 0})) for st, data in run.frames]
    s = await sessions.create(
        run.lab,
        run.params,
        run.seed,
        ip,
        state=state,
        step=run.step,
        scalars=run.scalars,
        frames=frames,
        session_id=session_id,
        kept=[protocol.KeptRun.model_validate(k) for k in run.kept],
    )
    s.read_only = mode == "replay"
    if mode == "resume" and run.class_code and token_matches(run.token_hash, token):
        sessions.reclaim_code(s, run.class_code)
    return s
