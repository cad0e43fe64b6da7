"""SessionManager: creating, finding, forking and reaping sessions, within the limits."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import secrets
import socket
import threading
import time

from backend import collector
from backend.admission import SessionError, validate_params
from backend.classroom import AttemptLimiter, new_code, normalize_code
from backend.config import Settings
from backend.join_turns import JoinTurns
from backend.labs import REGISTRY
from backend.protocol import KEPT_MAX_RUNS, KeptRun
from backend.sessions import Session
from backend.shared_state import (
    HEARTBEAT_S,
    ClassRef,
    LocalState,
    Published,
    SharedUnavailable,
    route_key,
    shared_state,
)
from backend.store import RunStore
from backend.warm_torch import warm_torch

log = logging.getLogger("shaomai.sessions")
SHUTDOWN_AUTOSAVE_S = 5.0  # a graceful stop autosaves sessions for at most this long
CLASS_AWAY_S = 12 * 3600.0  # a class saved this recently waits for its restore (a school day)


def _shared_down(exc: SharedUnavailable) -> SessionError:
    msg = "classes are briefly unavailable (the shared store is down); try again in a moment"
    return SessionError("busy", msg, key="err.shared_down")


def _class_of(s: Session) -> str | None:
    """The join code of the class this session is a student's fork of (None: its own)."""
    return getattr(s, "forked_class", None)


class SessionManager:
    def __init__(self, settings: Settings, store: RunStore | None = None):
        self.settings = settings
        self.sessions: dict[str, Session] = {}  # changed through _add and _drop only
        self._own: collections.Counter[str] = collections.Counter()  # address -> own sessions
        self.codes: dict[str, str] = {}  # join code -> session id, of this replica's classes
        self.replica = settings.replica or f"{socket.gethostname()}:{settings.port}"
        # Join codes and per-address limits, shared by every replica (docs/deploy.md).
        self.shared = shared_state(settings, self.replica)
        self.connections: set = set()  # live websocket connections (backend.connection)
        self.metrics_registry = None  # made at the first /metrics scrape
        # Classes saved before a restart, waiting for their teacher's restore: code -> lab.
        # Their code is not a wrong one (students' pages wait for it) and is not given out.
        self.classes_away: dict[str, str] = {}
        # Answers to join codes per address and browser (guessing) and new sessions per
        # address a minute are counted in `shared`; a right code costs nothing and others'
        # wrong ones only slow it, so a class of hundreds behind one school NAT joins
        # (docs/security.md, promise 4; backend/join_turns.py).
        # Forks of a shared session are the class's, counted per class, not per address.
        self.class_forks = AttemptLimiter(settings.class_forks_per_min)
        self.join_turns = JoinTurns(self.shared, settings.join_wait_s)
        self.store = store  # the saved-runs store, for autosaves (None: no autosave)
        self._reaper: asyncio.Task | None = None
        self._heartbeat: asyncio.Task | None = None
        self._autosaver: asyncio.Task | None = None
        self._autosaves: set[asyncio.Task] = set()  # autosaves on share, running
        self._collector: collector.Collector | None = None  # a lecture hall's gc pauses

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
            mine = self._own[ip] + await self.shared.others_own(ip)
            if mine >= self.settings.max_sessions_per_ip:
                msg = "too many sessions from this address; close some first"
                raise SessionError("busy", msg, key="err.address_sessions")
            if not await self.shared.allow_open(ip):
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
        self._add(session)
        try:
            await session.start(state, step, scalars, frames)
        except Exception:
            self._drop(session)
            await session.close()
            raise
        log.info("session %s opened: %s", session.id[:6], lab_id)
        self._lease_soon(session)  # its owner lease now, not at the next heartbeat
        return session

    def get(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            msg = "no such session (it may have expired)"
            raise SessionError("not_found", msg, "session", "err.no_session")
        return session

    # -- classroom ------------------------------------------------------------------------
    def _ref(self, session: Session) -> ClassRef:
        return ClassRef(session.id, session.lab_cls.id, self.replica)

    async def share(self, session: Session) -> str:
        """The session's join code (one per session; it expires with the session), claimed
        in the shared state so that no replica gives it out twice."""
        if session.share_code is None:
            try:
                while True:
                    code = new_code(self.codes.keys() | self.classes_away.keys())
                    if await self.shared.claim_code(code, self._ref(session)):
                        break
            except SharedUnavailable as exc:
                raise _shared_down(exc) from None
            session.share_code = code
            self.codes[code] = session.id
            # The teacher's network was told the code: a class on it (one school NAT) is told
            # it again at once, whatever a prankster there guessed (docs/security.md).
            with contextlib.suppress(SharedUnavailable):
                await self.shared.remember(session.owner_ip, code, True)
            self._background(self._class_begins(session))
        return session.share_code

    async def resolve_code(self, code: str, ip: str, browser: str | None = None) -> ClassRef:
        """Where a join code leads, on whichever replica runs it. A code the address was
        told lately is told again at once and free (one student's answer is the class's).
        Any other code waits for a turn of the address (and of `browser`): a wrong answer
        spends it, a right one gives it back, and the wait never depends on whether the code
        is right, so a guesser tests at most `join_attempts_per_min` codes a minute while
        others' wrong codes only slow a class down (backend/join_turns.py)."""
        code = normalize_code(code)
        turn = None
        try:
            known = await self.shared.known(ip, code)
            if known is None:
                turn = await self.join_turns.take(ip, code, browser)
                if turn is None:
                    known = await self.shared.known(ip, code)
            # Looked up even when this address was told "no class" lately: the class may have
            # come since (shared, or refilled after a Redis restart). A guesser re-asks only
            # codes it already paid a turn for, within a minute: nothing it could use.
            ref = await self.shared.lookup(code)
            if known is False and ref is not None:
                await self.shared.remember(ip, code, True)
            if ref is None and code in self.classes_away:
                if turn is not None:
                    await self.shared.give_back(turn.keys)
                msg = "this class is not back yet after the server restart; its teacher restores it"
                lab = self.classes_away[code]
                raise SessionError("not_found", msg, "code", "err.class_away", {"lab": lab})
            if turn is not None:  # an answer told: remembered, and a wrong one counted
                await self.shared.remember(ip, code, ref is not None)
                if ref is None:
                    await self.shared.note(ip, "wrong")
                else:
                    await self.shared.give_back(turn.keys)
            if ref is None:
                msg = "no class with this code (it may have ended)"
                raise SessionError("not_found", msg, "code", "err.no_class")
        except SharedUnavailable as exc:
            raise _shared_down(exc) from None
        finally:
            if turn is not None:
                self.join_turns.done(ip, code)
        return ref

    async def by_code(self, code: str, ip: str) -> Session:
        """The session a join code names, on this replica (a `join` sent in band)."""
        ref = await self.resolve_code(code, ip)
        session = self.sessions.get(ref.session)
        if session is None:  # another replica's class: the page asks /api/join first
            msg = "this class runs on another replica; join it through /api/join/CODE"
            raise SessionError("not_found", msg, "code", "err.no_class")
        return session

    def reclaim_code(self, session: Session, code: str) -> None:
        """A restored class's session takes its old join code back (if no live class here
        has it), so its students' waiting pages rejoin it. The shared state hears it on the
        next heartbeat (a restore replaces its own class's lease)."""
        if code in self.codes and self.codes[code] in self.sessions:
            return
        session.share_code = code
        self.codes[code] = session.id
        self.classes_away.pop(code, None)
        if isinstance(self.shared, LocalState):  # one process: the code is back at once
            self.shared.codes[code] = self._ref(session)
        self._background(self._class_begins(session))
        self._background(self.beat())
        log.info("session %s: class %s restored", session.id[:6], code)

    async def fork(self, source: Session, ip: str) -> Session:
        """A new session from `source`'s params, seed, step, weights, scalar history and
        kept runs."""
        state = await source.copy_state(finish=True)
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
            session_id=f"{route_key(source.id)}.{secrets.token_urlsafe(12)}",
        )
        log.info("session %s forked from %s at step %d", forked.id[:6], source.id[:6], source.step)
        return forked

    # -- lifetime -------------------------------------------------------------------------
    async def close(self, session: Session) -> None:
        self._drop(session)
        if session.share_code:
            if self.codes.get(session.share_code) == session.id:
                del self.codes[session.share_code]
            with contextlib.suppress(SharedUnavailable):  # else its lease simply runs out
                await self.shared.drop_code(session.share_code, session.id)
        await session.close()

    async def reap(self) -> None:
        now = time.monotonic()
        for s in list(self.sessions.values()):
            if len(s.bus) == 0 and now - s.last_active > self.settings.idle_grace_s:
                log.info("session %s reaped after %.0f s idle", s.id[:6], now - s.last_active)
                await self.close(s)
        self.shared.prune()
        self.class_forks.prune()
        await self._refresh_classes_away()

    async def _refresh_classes_away(self) -> None:
        """Classes saved lately that no replica runs now wait for their teacher's restore,
        not counted as wrong codes: after a restart, and in a hosted deployment after the
        replica running them died (the saved-runs store is shared)."""
        if self.store is None:
            return
        try:
            away = await asyncio.to_thread(self.store.classes, time.time() - CLASS_AWAY_S)
        except Exception as exc:  # the database is away too: keep the last list
            log.warning("classes away not refreshed: %s", exc)
            return
        self.classes_away = {c: lab for c, lab in away.items() if c not in self.codes}

    # -- the shared state's leases ----------------------------------------------------------
    def _add(self, s: Session) -> None:
        self.sessions[s.id] = s
        if _class_of(s) is None:
            self._own[s.owner_ip] += 1

    def _drop(self, s: Session) -> None:
        collector.released()
        if self.sessions.pop(s.id, None) is s and _class_of(s) is None:
            self._own[s.owner_ip] -= 1
            if not self._own[s.owner_ip]:
                del self._own[s.owner_ip]

    def _own_per_ip(self) -> dict[str, int]:
        """Sessions each address opened here, students' forks of a class aside: counted as
        they come and go (`_add`, `_drop`), not by a walk of every session at each open."""
        return dict(self._own)

    def _published(self) -> Published:
        codes = {
            code: self._ref(self.sessions[sid])
            for code, sid in self.codes.items()
            if sid in self.sessions
        }
        return Published(codes, self._own_per_ip(), list(self.sessions))

    async def beat(self) -> None:
        """Renew this replica's leases (its codes, sessions, counts) in the shared state."""
        with contextlib.suppress(SharedUnavailable):  # logged once by the state; next beat
            await self.shared.publish(self._published())

    def _lease_soon(self, session: Session) -> None:
        """A new session's owner lease and its address's count, alone (O(1) in Redis): a
        whole beat per open made a storm of n opens O(n²) (docs/benchmarks.md, readers)."""
        ip = None if _class_of(session) is not None else session.owner_ip

        async def lease() -> None:
            n = self._own[ip] if ip is not None else 0  # when sent: closes meanwhile count
            with contextlib.suppress(SharedUnavailable):  # logged once; the next beat
                await self.shared.opened(session.id, ip, n)

        self._background(lease())

    def _background(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._autosaves.add(task)
        task.add_done_callback(self._autosaves.discard)

    async def _beat_forever(self) -> None:
        await self.shared.start()
        while True:
            await self.beat()
            await asyncio.sleep(HEARTBEAT_S)

    async def _class_begins(self, session: Session) -> None:
        """A shared session is a class's: its lab gets a process of its own (Settings.
        class_process), then its run is kept from the start (an autosave)."""
        if self.settings.class_process:
            await session.move_to_process()
        if self.store is not None and self.settings.autosave_s > 0:
            await self.autosave(session, force=True)

    # -- autosave -------------------------------------------------------------------------
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
        self._heartbeat = asyncio.create_task(self._beat_forever())
        self._collector = collector.start(lambda: len(self.connections))
        if self.store is not None and self.settings.autosave_s > 0:
            self._autosaver = asyncio.create_task(self._autosave_forever())
        if self.store is not None:
            try:
                self.classes_away = self.store.classes(since=time.time() - CLASS_AWAY_S)
            except Exception as exc:  # the database is away: start anyway, ask again on reap
                log.warning("classes away not read at start: %s", exc)
        # In the background: /api/health answers at once, and a page opened right after
        # finds torch ready (or waits only for the rest of the import).
        threading.Thread(target=warm_torch, name="torch-warm-up", daemon=True).start()

    def announce_shutdown(self) -> None:
        """Every connected client hears `shutting_down` before the server closes its socket."""
        for s in self.sessions.values():
            s.interrupt()
            s.bus.publish_text(s.status("shutting_down"))

    async def stop(self) -> None:
        if self._reaper:
            self._reaper.cancel()
        if self._heartbeat:
            self._heartbeat.cancel()
        collector.stop(self._collector)
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
        await self.shared.stop()
