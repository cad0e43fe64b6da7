"""SessionManager: creating, finding, forking and reaping sessions, within the limits."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time

import torch

from backend.admission import SessionError, validate_params
from backend.classroom import AttemptLimiter, new_code, normalize_code
from backend.config import Settings
from backend.labs import REGISTRY
from backend.protocol import KEPT_MAX_RUNS, KeptRun
from backend.sessions import Session

log = logging.getLogger("shaomai.sessions")


def _warm_up() -> None:
    """Pay torch's one-time costs now rather than in the first learner's session: an
    optimizer's first construction imports torch._dynamo (2-4 s on two busy cores), and
    the first backward starts autograd's machinery. Then everything start-up made is moved
    out of the garbage collector's sight (`gc.freeze`): a full collection scanned those
    ~200k objects in 44-75 ms, a pause of every session's stream each time it ran."""
    try:
        w = torch.zeros(4, requires_grad=True)
        opt = torch.optim.AdamW([w], lr=0.1)
        (w * 2.0).sum().backward()
        opt.step()
    except Exception:  # a failed warm-up only costs the first session its time
        log.exception("torch warm-up failed")
    gc.freeze()


class SessionManager:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.sessions: dict[str, Session] = {}
        self.codes: dict[str, str] = {}  # join code -> session id
        self.joins = AttemptLimiter(settings.join_attempts_per_min)
        self.opens = AttemptLimiter(settings.sessions_per_ip_per_min)
        self._reaper: asyncio.Task | None = None

    async def create(
        self,
        lab_id: str,
        raw: dict,
        seed: int,
        ip: str,
        *,
        state: dict | None = None,
        step: int = 0,
        scalars: list[tuple[int, dict]] | None = None,
        frames: list[tuple[int, bytes]] | None = None,
        session_id: str | None = None,
        kept: list[KeptRun] | None = None,
    ) -> Session:
        """A new session (under `session_id` when the page made one: it must be free)."""
        lab_cls = REGISTRY.get(lab_id)
        if lab_cls is None:
            msg = f"no lab {lab_id!r}"
            raise SessionError("not_found", msg, "lab", "err.no_lab", {"lab": lab_id})
        params = validate_params(lab_cls, raw, self.settings)
        if session_id is not None and session_id in self.sessions:
            msg = "a session with this id already exists; make a new id"
            raise SessionError("conflict", msg, "session", "err.session_in_use")
        if len(self.sessions) >= self.settings.max_sessions:
            msg = "the server is running its maximum number of sessions"
            raise SessionError("busy", msg, key="err.server_full")
        mine = sum(1 for s in self.sessions.values() if s.owner_ip == ip)
        if mine >= self.settings.max_sessions_per_ip:
            msg = "too many sessions from this address; close some first"
            raise SessionError("busy", msg, key="err.address_sessions")
        if not self.opens.allow(ip):
            msg = "too many new sessions from this address; wait a minute"
            raise SessionError("busy", msg, key="err.address_new_sessions")
        session = Session(lab_cls, params, seed, self.settings, ip, session_id)
        session.kept = list(kept or ())[-KEPT_MAX_RUNS:]
        session.kept_made = len(session.kept)
        self.sessions[session.id] = session
        try:
            await session.start(state, step, scalars, frames)
        except Exception:
            self.sessions.pop(session.id, None)
            await session.close()
            raise
        log.info("session %s opened: %s", session.id[:6], lab_id)
        return session

    def get(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            msg = "no such session (it may have expired)"
            raise SessionError("not_found", msg, "session", "err.no_session")
        return session

    # -- classroom ------------------------------------------------------------------------
    def share(self, session: Session) -> str:
        """The session's join code (one per session; it expires with the session)."""
        if session.share_code is None:
            session.share_code = new_code(self.codes)
            self.codes[session.share_code] = session.id
        return session.share_code

    def by_code(self, code: str, ip: str) -> Session:
        if not self.joins.allow(ip):
            msg = "too many join attempts from this address; wait a minute"
            raise SessionError("busy", msg, key="err.join_attempts")
        sid = self.codes.get(normalize_code(code))
        if sid is None or sid not in self.sessions:
            msg = "no class with this code (it may have ended)"
            raise SessionError("not_found", msg, "code", "err.no_class")
        return self.sessions[sid]

    async def fork(self, source: Session, ip: str) -> Session:
        """A new session from `source`'s params, seed, step, weights, scalar history and
        kept runs."""
        state = await source.copy_state()
        history = list(zip(*source.timeline.scalars_after(-1), strict=True))
        forked = await self.create(
            source.lab_cls.id,
            source.params.model_dump(),
            source.seed,
            ip,
            state=state,
            step=source.step,
            scalars=history,
            kept=source.kept,
        )
        log.info("session %s forked from %s at step %d", forked.id[:6], source.id[:6], source.step)
        return forked

    # -- lifetime -------------------------------------------------------------------------
    async def close(self, session: Session) -> None:
        self.sessions.pop(session.id, None)
        if session.share_code:
            self.codes.pop(session.share_code, None)
        await session.close()

    async def reap(self) -> None:
        now = time.monotonic()
        for s in list(self.sessions.values()):
            if len(s.bus) == 0 and now - s.last_active > self.settings.idle_grace_s:
                log.info("session %s reaped after %.0f s idle", s.id[:6], now - s.last_active)
                await self.close(s)
        self.joins.prune()
        self.opens.prune()

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.reap_interval_s)
            await self.reap()

    def start(self) -> None:
        self._reaper = asyncio.create_task(self._reap_forever())
        # In the background: /api/health answers at once, and a page opened right after
        # finds torch ready (or waits only for the rest of the import).
        threading.Thread(target=_warm_up, name="torch-warm-up", daemon=True).start()

    def announce_shutdown(self) -> None:
        """Every connected client hears `shutting_down` before the server closes its socket."""
        for s in self.sessions.values():
            s.interrupt()
            s.bus.publish_text(s.status("shutting_down"))

    async def stop(self) -> None:
        if self._reaper:
            self._reaper.cancel()
        for s in list(self.sessions.values()):
            await self.close(s)
