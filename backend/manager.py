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
from backend.store import RunStore

log = logging.getLogger("shaomai.sessions")
SHUTDOWN_AUTOSAVE_S = 5.0  # a graceful stop autosaves sessions for at most this long
CLASS_AWAY_S = 12 * 3600.0  # a class saved this recently waits for its restore (a school day)


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


class FailedAttempts(AttemptLimiter):
    """AttemptLimiter whose events are failures: `full` asks without counting one."""

    def full(self, key: str) -> bool:
        q = self.events.get(key)
        now = time.monotonic()
        while q and now - q[0] > self.window:
            q.popleft()
        return bool(q) and len(q) >= self.limit


def _class_of(s: Session) -> str | None:
    """The join code of the class this session is a student's fork of (None: its own)."""
    return getattr(s, "forked_class", None)


class SessionManager:
    def __init__(self, settings: Settings, store: RunStore | None = None):
        self.settings = settings
        self.sessions: dict[str, Session] = {}
        self.codes: dict[str, str] = {}  # join code -> session id
        # Classes saved before a restart, waiting for their teacher's restore: code -> lab.
        # Their code is not a wrong one (students' pages wait for it) and is not given out.
        self.classes_away: dict[str, str] = {}
        # Failed join codes per address (guessing); a right code costs nothing, so a class of
        # hundreds behind one school NAT joins at once (docs/security.md, "Limits").
        self.joins = FailedAttempts(settings.join_attempts_per_min)
        self.opens = AttemptLimiter(settings.sessions_per_ip_per_min)
        # Forks of a shared session are the class's, counted per class, not per address.
        self.class_forks = AttemptLimiter(settings.class_forks_per_min)
        self.store = store  # the saved-runs store, for autosaves (None: no autosave)
        self._reaper: asyncio.Task | None = None
        self._autosaver: asyncio.Task | None = None
        self._autosaves: set[asyncio.Task] = set()  # autosaves on share, running

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
        class_code: str | None = None,
    ) -> Session:
        """A new session (under `session_id` when the page made one: it must be free).

        `class_code`: a student's fork of the class with this join code. It counts against
        the class (`max_forks_per_class`, `class_forks_per_min`), not against the address:
        a whole class behind one school address forks the teacher's run at once."""
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
        if class_code is None:
            mine = sum(
                1 for s in self.sessions.values() if s.owner_ip == ip and _class_of(s) is None
            )
            if mine >= self.settings.max_sessions_per_ip:
                msg = "too many sessions from this address; close some first"
                raise SessionError("busy", msg, key="err.address_sessions")
            if not self.opens.allow(ip):
                msg = "too many new sessions from this address; wait a minute"
                raise SessionError("busy", msg, key="err.address_new_sessions")
        else:
            forks = sum(1 for s in self.sessions.values() if _class_of(s) == class_code)
            if forks >= self.settings.max_forks_per_class:
                msg = "this class has its maximum number of forks; close some first"
                raise SessionError("busy", msg, key="err.class_forks")
            if not self.class_forks.allow(class_code):
                msg = "too many forks of this class in a minute; wait a minute"
                raise SessionError("busy", msg, key="err.class_forks_rate")
        session = Session(lab_cls, params, seed, self.settings, ip, session_id)
        session.forked_class = class_code
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
            session.share_code = new_code(self.codes.keys() | self.classes_away.keys())
            self.codes[session.share_code] = session.id
            self._autosave_soon(session)  # a shared run is a class's: keep it from the start
        return session.share_code

    def by_code(self, code: str, ip: str) -> Session:
        """The session a join code names. Only wrong codes count against the address: past
        `join_attempts_per_min` of them in a minute every lookup from it is refused (a
        guesser learns nothing more, even from a right code), while a class of any size
        behind one address joins with the right code at once."""
        if self.joins.full(ip):
            msg = "too many join attempts from this address; wait a minute"
            raise SessionError("busy", msg, key="err.join_attempts")
        code = normalize_code(code)
        sid = self.codes.get(code)
        if (sid is None or sid not in self.sessions) and code in self.classes_away:
            msg = "this class is not back yet after the server restart; its teacher restores it"
            lab = self.classes_away[code]
            raise SessionError("not_found", msg, "code", "err.class_away", {"lab": lab})
        if sid is None or sid not in self.sessions:
            self.joins.allow(ip)  # one failed attempt
            msg = "no class with this code (it may have ended)"
            raise SessionError("not_found", msg, "code", "err.no_class")
        return self.sessions[sid]

    def reclaim_code(self, session: Session, code: str) -> None:
        """A restored class's session takes its old join code back (if no live class has
        it), so its students' waiting pages rejoin it."""
        if code in self.codes and self.codes[code] in self.sessions:
            return
        session.share_code = code
        self.codes[code] = session.id
        self.classes_away.pop(code, None)
        self._autosave_soon(session)
        log.info("session %s: class %s restored", session.id[:6], code)

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
            class_code=source.share_code or _class_of(source),
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
        self.class_forks.prune()

    # -- autosave -------------------------------------------------------------------------
    def _autosave_soon(self, session: Session) -> None:
        if self.store is None or self.settings.autosave_s <= 0:
            return
        task = asyncio.get_running_loop().create_task(self.autosave(session, force=True))
        self._autosaves.add(task)
        task.add_done_callback(self._autosaves.discard)

    async def autosave(self, session: Session, *, force: bool = False) -> str | None:
        """Save `session` into its autosave slot (replacing the last) if it moved since the
        last autosave (or `force`); the run id, or None when nothing was saved. A replay,
        a session at step 0 with nothing kept, or a run over the store's cap is skipped."""
        from backend.saving import save_session  # saving imports this module

        if self.store is None or session.read_only:
            return None
        mark = (session.epoch, session.step, len(session.kept), session.kept_made)
        if not force and (mark == getattr(session, "autosaved", None) or mark[1:3] == (0, 0)):
            return None
        try:
            run_id = await save_session(self.store, session, "", autosave=True)
        except Exception as exc:  # an autosave never takes a session down
            log.warning("session %s: autosave failed: %s", session.id[:6], exc)
            return None
        session.autosaved = mark
        log.info("session %s autosaved at step %d", session.id[:6], session.step)
        return run_id

    async def autosave_all(self) -> None:
        for s in list(self.sessions.values()):
            if s.id in self.sessions:
                await self.autosave(s)

    async def _autosave_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.autosave_s)
            await self.autosave_all()

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.reap_interval_s)
            await self.reap()

    def start(self) -> None:
        self._reaper = asyncio.create_task(self._reap_forever())
        if self.store is not None and self.settings.autosave_s > 0:
            self._autosaver = asyncio.create_task(self._autosave_forever())
        if self.store is not None:
            self.classes_away = self.store.classes(since=time.time() - CLASS_AWAY_S)
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
        if self._autosaver:
            self._autosaver.cancel()
        for task in list(self._autosaves):
            task.cancel()
        if self.store is not None and self.settings.autosave_s > 0:
            # A restart loses nothing that moved: every session into its slot, for a few
            # seconds at most (a stop must not hang; the periodic autosave covers the rest).
            deadline = time.monotonic() + SHUTDOWN_AUTOSAVE_S
            for s in list(self.sessions.values()):
                if time.monotonic() > deadline:
                    log.warning("shutdown: autosave stopped after %.0f s", SHUTDOWN_AUTOSAVE_S)
                    break
                await self.autosave(s)
        for s in list(self.sessions.values()):
            await self.close(s)
