"""One websocket connection: parse and check client messages, drive or view a session.

A receive loop validates each message (size, JSON, schema, rate) and dispatches it; a
sender task drains the connection's Outbox (control messages in order, scalars from the
timeline since the cursor, the newest frames). Commands run in arrival order under the
session's command lock; a `pause` also interrupts a running step the moment it arrives.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import secrets
import time
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect
from pydantic import BaseModel, ValidationError

from backend import joining, metrics, polls, protocol, subscriptions, view_keys, ws_direct
from backend.admission import SessionError
from backend.bus import Outbox
from backend.collector import released as collector_released
from backend.config import Settings
from backend.manager import SessionManager
from backend.message_rate import MessageRate
from backend.saving import open_saved, save_session
from backend.send_now import SendNow, scalar_texts
from backend.sessions import Session
from backend.store import RunStore

log = logging.getLogger("shaomai.ws")
# Scalars without a frame (steps faster than frames) go out together at most this often: a
# message a step at 75 steps/s was 75 sends a viewer a second for charts drawn 30 times.
SCALARS_EVERY_S = 1 / 30
MAX_WAITING = 64  # commands queued on one connection


class Connection:
    def __init__(
        self,
        ws: WebSocket,
        sessions: SessionManager,
        settings: Settings,
        store: RunStore,
        url_session: str | None = None,
        url_token: str | None = None,
        wait_subscribe: bool = False,
    ):
        self.ws = ws
        self.sessions = sessions
        self.store = store
        self.settings = settings
        self.box = Outbox()
        self.session: Session | None = None
        self.role: str | None = None
        self.ip = ws.client.host if ws.client else "?"
        self._rate = MessageRate(settings.messages_per_s)
        # Commands waiting, and the task that runs them (only while some wait: a viewer's
        # connection lives for an hour and sends a message or two).
        self._inbox: list = []
        self._worker: asyncio.Task | None = None
        self._throttled = False
        self._scalars_sent_t = 0.0
        self._scalars_timer: asyncio.TimerHandle | None = None
        # `/ws?session=ID&token=TOKEN`: joined on connect; an `open` creates ID when free.
        self.url_session = url_session
        self.url_token = url_token
        self.wait_subscribe = wait_subscribe  # `&wait=subscribe`: subscriptions.hold_frames
        write = ws.scope.get("extensions", {}).get(ws_direct.EXTENSION)
        if write is not None and settings.direct_writes:
            self.box.send_now = SendNow(self, write)

    # -- output ---------------------------------------------------------------------------
    def reply(self, message: BaseModel) -> None:
        """Send a server message (a protocol model) to this connection only."""
        if isinstance(message, protocol.Error):
            metrics.refused(message.code)
        self.box.put_text(json.dumps(protocol.dump(message), separators=(",", ":")))

    def error(self, *args: Any, **kwargs: Any) -> None:
        """Reply with a protocol `error` (protocol.error's arguments)."""
        self.reply(protocol.error(*args, **kwargs))

    async def _send_loop(self) -> None:
        box, ws = self.box, self.ws
        while True:
            box.idle = True
            await box.wake.wait()
            box.idle = False
            box.wake.clear()
            while True:
                if box.overflowed:
                    await ws.close(1008, "too many pending messages")
                    return
                item = box.pop(latest_only=bool(box.max_fps))
                if item is None:
                    # No row waits after a frame that was its step's row: no timer then.
                    if self._rows_waiting(self.session):
                        wait = self._scalars_sent_t + SCALARS_EVERY_S - time.monotonic()
                        if wait <= 0:
                            await self._send_scalars()
                        elif self._scalars_timer is None:  # the rest go out together, soon
                            self._scalars_timer = asyncio.get_running_loop().call_later(
                                wait, self._scalars_due
                            )
                    break
                kind, data = item
                if kind == "t":
                    await ws.send_text(data)
                    metrics.sent_text(len(data))
                    box.sent_bytes += len(data)
                    # After `ready` (always first) and after each status: the scalars so far.
                    await self._send_scalars()
                    continue
                if box.max_fps:
                    wait = box.last_frame_t + 1.0 / box.max_fps - time.monotonic()
                    if wait > 0:
                        box.push_back(kind, data)
                        asyncio.get_running_loop().call_later(wait, box.wake.set)
                        break
                # A frame never arrives before its step's scalars: sent first, or, for a client
                # that takes a frame's header scalars as its row, in the frame itself.
                row = subscriptions.row_step(data, self.session) if box.scalars_either else None
                await self._send_scalars(math.inf if row is None else row)
                data = subscriptions.cut(data, box, self.session)  # once per distinct subscription
                box.last_frame_t = time.monotonic()
                await ws.send_bytes(data)
                if row is not None and box.cursor < row:  # every row before it sent: it is the row
                    box.cursor = row
                metrics.sent_frame(len(data))
                box.sent_bytes += len(data)

    def _rows_waiting(self, s: Session | None) -> bool:
        return s is not None and s.timeline.last_scalar_step > self.box.cursor

    def _scalars_due(self) -> None:
        self._scalars_timer = None
        self.box.wake.set()

    async def _send_scalars(self, before: float = math.inf) -> None:
        """The rows after the connection's cursor, those before step `before`."""
        self._scalars_sent_t = time.monotonic()
        for text in scalar_texts(self.session, self.box, before):
            await self.ws.send_text(text)
            metrics.sent_text(len(text))
            self.box.sent_bytes += len(text)

    # -- input ----------------------------------------------------------------------------
    async def run(self) -> None:
        self.sessions.connections.add(self)
        try:
            await self._run()
        finally:
            self.sessions.connections.discard(self)
            collector_released()
            self.box.send_now = None  # no cycle left through the publishing path

    async def _run(self) -> None:
        self._join_url()
        sender = asyncio.create_task(self._send_loop())
        try:
            while True:
                raw = await self.ws.receive()
                if raw["type"] == "websocket.disconnect":
                    break
                self._handle_raw(raw)
                if sender.done():
                    break
                if self._throttled:
                    # Stop reading until the allowance refills: TCP pushes back on a flooder
                    # instead of the event loop parsing and refusing every message.
                    self._throttled = False
                    await asyncio.sleep(self._rate.refill_s())
        except WebSocketDisconnect:
            pass
        finally:
            if sender.done() and not sender.cancelled() and sender.exception():
                # A socket closed under the sender (keepalive timeout, client gone) is a
                # normal end; anything else is worth a warning.
                exc = sender.exception()
                closed = isinstance(exc, RuntimeError | WebSocketDisconnect | ConnectionError)
                (log.debug if closed else log.warning)("sender of %s ended: %r", self.ip, exc)
            sender.cancel()
            if self._worker is not None:
                self._worker.cancel()
            self._detach()

    def _handle_raw(self, raw: dict[str, Any]) -> None:
        text = raw.get("text")
        if text is None:
            msg = "binary messages are not accepted; send JSON text"
            return self.error("bad_message", msg, key="err.binary")
        size = len(text) if len(text) * 4 <= self.settings.max_message_bytes else len(text.encode())
        if size > self.settings.max_message_bytes:
            cap = self.settings.max_message_bytes
            msg = f"message of {size} bytes is over the {cap} cap"
            return self.error(
                "too_large", msg, key="err.message_size", values={"size": size, "cap": cap}
            )
        if not self._rate.take():
            if self._rate.say_busy():
                self.error("busy", "too many messages; slow down", key="err.slow_down")
            self._throttled = True
            return
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return self.error("bad_message", "not valid JSON", key="err.not_json")
        try:
            msg = protocol.client_message.validate_python(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or None
            return self.error("bad_message", f"{field or 'message'}: {err['msg']}", field)
        if self.session is not None:
            self.session.touch()
            if msg.type == "control" and msg.action == "pause" and self.role == "driver":
                self.session.interrupt()  # stop a long step now, not after it
        if len(self._inbox) >= MAX_WAITING:
            return self.error("busy", "too many commands waiting; slow down", key="err.queue_full")
        self._inbox.append(msg)
        if self._worker is None:
            self._worker = asyncio.create_task(self._process())

    async def _process(self) -> None:
        """Commands of one connection run one after another, in arrival order."""
        try:
            while self._inbox:
                await self._dispatch(self._inbox.pop(0))
        finally:
            self._worker = None  # the next command starts a worker again

    async def _dispatch(self, msg) -> None:
        try:
            await self._dispatch_checked(msg)
        except protocol.Refusal as exc:  # a SessionError or a LabError
            self.reply(exc.as_error())
        except Exception:  # a bug: say so, and keep serving this connection's next commands
            log.exception("%s from %s failed", msg.type, self.ip)
            self.error("error", f"the server failed on `{msg.type}`")

    async def _dispatch_checked(self, msg) -> None:
        kind = msg.type
        if kind == "open":
            return await self._open(msg)
        if kind == "join":
            return await self._join(msg)
        s = self.session
        if s is None:
            msg = f"`{kind}` before `open` or `join`"
            raise SessionError("bad_message", msg, key="err.open_first")
        if kind in polls.KINDS:  # the class's polls (backend/polls.py checks who may)
            return polls.handle(self, s, msg)
        if kind == "subscribe":
            return subscriptions.apply(self.box, msg, s)
        if kind == "fork":
            return await self._fork(s)
        if kind == "seek":
            data = s.seek(msg.step)
            if data is None:
                raise SessionError("not_found", "no recorded frame yet", "step", "err.no_frame")
            self.box.put_frame(data)  # to this connection only: the others keep watching
            return
        if self.role != "driver":
            msg = f"viewers cannot `{kind}`; fork to drive your own"
            raise SessionError("forbidden", msg, key="err.viewer", values={"action": kind})
        if kind == "share":
            code = await self.sessions.share(s)
            subscriptions.watch_class(self)
            return self.reply(protocol.Shared(code=code, url=f"/join/{code}"))
        if kind == "view":
            return s.set_view(view_keys.check_state(msg.state, s.lab_cls, s.params))
        if s.read_only and kind != "save":
            msg = "this is a replay of a saved run; fork it to train"
            raise SessionError("forbidden", msg, key="err.replay")
        async with s.command_lock:
            if kind == "control":
                await self._control(s, msg)
            elif kind == "set":
                await s.set_params(msg.params)
            elif kind == "infer":
                await s.infer(msg.input)
            elif kind == "save":
                run_id = await save_session(self.store, s, msg.name)
                self.reply(protocol.Saved(run=run_id))

    async def _control(self, s: Session, msg) -> None:
        if msg.action == "play":
            await s.play(msg.speed)
        elif msg.action == "pause":
            await s.pause()
        elif msg.action == "step":
            await s.step_n(msg.count)
        elif msg.action == "reset":
            await s.reset()
        elif msg.action == "keep":
            s.keep(msg.label)
        elif msg.action == "unkeep":
            s.unkeep(msg.id)

    def _join_url(self) -> None:
        """`/ws?session=ID`: join ID now, as driver with `&token=` (else a viewer)."""
        sid = self.url_session
        if sid is None:
            return
        if not protocol.valid_session_id(sid):
            self.url_session = None  # the in-band messages still work, under ids made here
            msg = "session: an id is 22 to 64 characters of A-Z a-z 0-9 - _ (128 bits or more)"
            return self.error("bad_message", msg, "session", "err.session_id")
        s = self.sessions.sessions.get(sid)
        if s is None:  # an `open` on this connection creates it
            msg = "no such session (it may have expired)"
            return self.error("not_found", msg, "session", "err.no_session")
        try:
            self._attach(s, self._role(s, self.url_token))
        except protocol.Refusal as exc:
            self.reply(exc.as_error())

    async def _open(self, msg) -> None:
        if self.session is not None:
            if self.session.id == self.url_session:
                msg = "a session with this id already exists; make a new id"
                raise SessionError("conflict", msg, "session", "err.session_in_use")
            msg = "this connection already has a session"
            raise SessionError("bad_message", msg, key="err.has_session")
        sid = self.url_session
        if msg.run is not None:
            s = await open_saved(
                self.sessions, self.store, msg.run, msg.mode, self.ip, sid, msg.token
            )
        else:
            s = await self.sessions.create(msg.lab, msg.params, msg.seed, self.ip, session_id=sid)
        self._attach(s, "driver")

    @staticmethod
    def _role(s: Session, token: str | None) -> str:
        if token is None:
            return "viewer"
        if not secrets.compare_digest(token.encode(), s.token.encode()):
            raise SessionError("forbidden", "wrong driver token", "token", "err.token")
        return "driver"

    async def _join(self, msg) -> None:
        if self.session is not None:
            msg = "this connection already has a session"
            raise SessionError("bad_message", msg, key="err.has_session")
        if msg.code is not None:
            s = await self.sessions.by_code(msg.code, self.ip)
        else:
            s = self.sessions.get(msg.session)
        self._attach(s, self._role(s, msg.token))

    async def _fork(self, source: Session) -> None:
        forked = await self.sessions.fork(source, self.ip)
        self._detach()
        self.box.rewind()
        self._attach(forked, "driver")

    def _attach(self, s: Session, role: str) -> None:
        self.session, self.role = s, role
        self.box.cursor = -1  # the whole scalar history follows `ready` (sent now or queued)
        self.reply(
            protocol.Ready(
                session=s.id,
                role=role,
                lab=s.lab_cls.id,
                params=s.params.model_dump(),
                schema=joining.params_schema(s.lab_cls.Params),
                seed=s.seed,
                step=s.step,
                state=s.state,
                run=s.epoch,
                read_only=s.read_only,
                token=s.token if role == "driver" else None,
                kept=s.kept,
            )
        )
        s.bus.subscribe(self.box)
        s.touch()
        joining.connections_changed(s)  # everyone sees the new count (coalesced)
        if s.view_state and role == "viewer":
            self.reply(protocol.View(state=s.view_state))
        if s.share_code and role == "driver":
            subscriptions.watch_class(self)  # the class's bandwidth figure, every 2 s
            self.reply(protocol.Shared(code=s.share_code, url=f"/join/{s.share_code}"))
        if self.wait_subscribe:  # its subscription brings the latest frame, cut to it
            self.wait_subscribe = False
            subscriptions.hold_frames(self.box, s)
        else:
            subscriptions.put_latest(self.box, s)
        polls.on_attach(self, s)  # a late joiner sees the open poll

    def _detach(self) -> None:
        s = self.session
        if s is not None:
            s.bus.unsubscribe(self.box)
            s.touch()
            joining.connections_changed(s)
            self.session = None
            if len(s.bus) == 0:
                s.nobody_watches()  # a run left playing in a closed tab pauses
