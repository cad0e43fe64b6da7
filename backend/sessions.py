"""Session: one lab run, its worker thread and timeline (SessionManager is in manager.py).

All torch work runs on the session's own single worker thread (one torch thread each), so a
slow step never stalls the event loop or another session. The worker reports each step back
to the event loop with `call_soon_threadsafe`; only the loop thread touches the timeline and
the bus, so neither needs a lock. Commands are serialized by the single-thread executor.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from backend import metrics, protocol, wire
from backend.admission import SessionError, pick_device, validate_params
from backend.bus import FrameBus
from backend.config import Settings
from backend.labs.base import Lab, LabError, LabParams
from backend.scalars_message import ScalarsTexts
from backend.session_move import MovesToProcess
from backend.session_process import RemoteWorker
from backend.session_worker import WorkerSide
from backend.timeline import Timeline
from backend.worker import init_worker, trim_memory

log = logging.getLogger("shaomai.sessions")

STATES = ("paused", "playing", "done", "diverged", "error")
IDLE_TRIM_S = 2.0  # an idle session's worker memory is trimmed after this long
PLAY_CHUNK_S = 1.0  # a playing session's worker job at most this long (see _play_loop)


class Session(WorkerSide, MovesToProcess):
    def __init__(
        self,
        lab_cls: type[Lab],
        params: LabParams,
        seed: int,
        settings: Settings,
        owner_ip: str,
        session_id: str | None = None,
    ):
        # The page's own id (`/ws?session=NEW`), or one made here: 128 bits either way.
        self.id = session_id or secrets.token_urlsafe(16)
        self.token = secrets.token_urlsafe(24)
        self.lab_cls = lab_cls
        self.params = params
        self.seed = seed
        self.settings = settings
        self.owner_ip = owner_ip
        self.device = pick_device(settings.device)
        self.state = "paused"
        self.message = ""
        self.step = 0
        self.epoch = 0  # bumped by every reset; stale reports from the worker are dropped
        self.timeline = Timeline(int(settings.timeline_mb * 2**20))
        self.scalars_texts = ScalarsTexts()  # encoded once for the connections in step
        self.bus = FrameBus()
        self.last_active = time.monotonic()
        self.lab: Lab | None = None
        self._executor = ThreadPoolExecutor(1, f"session-{self.id[:6]}", init_worker)
        self._loop = asyncio.get_running_loop()
        self._stop = threading.Event()
        self._submitted = self._started = 0  # commands for the worker: queued = the difference
        self._remote: RemoteWorker | None = None  # the lab's own process, if any
        if settings.session_process:
            self._remote = RemoteWorker(self)
            self._stop = self._remote.stop  # the same Event interface, seen by the child
        self.command_lock = asyncio.Lock()  # one command at a time, in arrival order
        self._player: asyncio.Task | None = None
        self._init_worker_state(settings)
        self._works = 0  # worker jobs started (see _went_idle)
        self.view_state: dict[str, Any] = {}
        self.kept: list[protocol.KeptRun] = []  # runs kept beside this one ("Keep this run")
        self.kept_made = 0  # keeps so far: the default labels #1, #2, ...
        self.read_only = False  # a replayed saved run: watch and seek, fork to train
        self.share_code: str | None = None
        self._alone: asyncio.Task | None = None  # pausing: the last connection left
        self._closed = False

    # -- plumbing -------------------------------------------------------------------------
    async def _work(self, fn, *args, command: bool = False):
        self._works += 1  # activity: a pending idle trim is off
        if self._remote is not None:  # the same job, by name, in the lab's process
            call = self._remote.call
            return await self._loop.run_in_executor(
                self._executor, call, fn.__name__, args, command
            )
        return await self._loop.run_in_executor(self._executor, fn, *args)

    async def _command(self, fn, *args):
        """Worker code for a command: a playing chunk ends at its next step to let it in."""
        self._submitted += 1  # written by the loop only; _started by the worker only
        if self._remote is not None:
            self._remote.commands(self._submitted)
            return await self._work(fn, *args, command=True)

        def started(*a):
            self._started += 1
            return fn(*a)

        return await self._work(started, *args)

    def status(self, state: str | None = None) -> dict[str, Any]:
        """The `status` message (protocol.Status), as the dict that is published."""
        msg = protocol.Status.model_construct(
            run=self.epoch,
            state=state or self.state,
            step=self.step,
            connections=len(self.bus),
            message=self.message or None,
        )
        return protocol.dump(msg)

    def _set_state(self, state: str, message: str = "") -> None:
        self.state, self.message = state, message
        self.bus.publish_text(self.status())
        if state != "playing":
            self._went_idle()

    def _went_idle(self) -> None:
        """Trim the worker's memory once the session has stayed idle for IDLE_TRIM_S (not
        at once: a learner pressing `step` would pay ~4 ms a step to fault it back in)."""
        self._loop.call_later(IDLE_TRIM_S, self._trim_if_idle, self._works)

    def _trim_if_idle(self, works: int) -> None:
        if works == self._works and self.state != "playing":
            with contextlib.suppress(RuntimeError):  # the session is closed
                self._executor.submit(trim_memory)

    def _report(
        self, epoch: int, rows: list[tuple[int, dict]], frame: tuple[int, bytes] | None = None
    ) -> None:
        """Loop thread: record steps' scalars and a frame, and wake the connections."""
        if epoch != self.epoch:
            return
        metrics.stepped(len(rows))
        for step, scalars in rows:
            self.timeline.add_scalars(step, scalars)
        if frame is not None:
            self.step, data = frame
            self.timeline.add_frame(self.step, data)
            self.bus.publish_frame(data, thin=True)
        else:
            self.step = rows[-1][0]
            self.bus.poke()

    def _publish_frame(self, data: bytes) -> None:
        """Loop thread: a frame that is no step of the run (an inference), to every viewer."""
        self.bus.publish_frame(data)

    # -- commands (loop-side) -------------------------------------------------------------
    async def start(
        self,
        state: dict | None = None,
        step: int = 0,
        scalars: list[tuple[int, dict]] | None = None,
        frames: list[tuple[int, bytes]] | None = None,
    ) -> None:
        """Build the lab; a fork or a saved run also brings weights, step and history."""
        for st, values in scalars or ():
            self.timeline.add_scalars(st, values)
        for st, data in frames or ():
            self.timeline.add_frame(st, data)
        self.step = step
        await self._guard(self._command(self._build, state, step))
        self._went_idle()

    async def copy_state(self, finish: bool = False) -> dict:
        """A deep copy of the lab's state, taken on the worker between two steps (`finish`:
        work in parts under way finished first, for a fork)."""
        return await self._guard(self._command(self._copy_state, finish))

    # -- kept runs ------------------------------------------------------------------------
    def keep(self, label: str | None = None) -> protocol.KeptRun:
        """Keep this run's scalar history, params and seed beside the next runs (resets and
        rebuilds leave it); at most KEPT_MAX_RUNS, the oldest goes. Everyone hears `kept`."""
        rows = [
            (step, {k: wire.json_number(v) for k, v in values.items()})
            for step, values in self.timeline.scalar_rows(protocol.KEPT_MAX_ROWS)
        ]
        self.kept_made += 1
        run = protocol.KeptRun(
            id=secrets.token_urlsafe(6),
            label=label or f"#{self.kept_made}",
            params=self.params.model_dump(mode="json"),
            seed=self.seed,
            rows=rows,
        )
        self.kept = [*self.kept, run][-protocol.KEPT_MAX_RUNS :]
        self._publish_kept()
        return run

    def unkeep(self, run_id: str | None = None) -> None:
        """Drop one kept run (by id), or all of them."""
        if run_id is not None and all(k.id != run_id for k in self.kept):
            msg = f"no kept run {run_id!r}"
            raise SessionError("not_found", msg, "id", "err.kept_none", {"id": run_id})
        self.kept = [k for k in self.kept if run_id is not None and k.id != run_id]
        self._publish_kept()

    def _publish_kept(self) -> None:
        self.bus.publish_text(protocol.dump(protocol.Kept.model_construct(runs=self.kept)))

    def set_view(self, state: dict[str, Any]) -> None:
        """The driver's view (selected head, hovered token, scrub step, presenter): viewers
        follow. A None clears its key for the viewers now and is not kept for later ones."""
        merged = {**self.view_state, **state}
        self.view_state = {k: v for k, v in merged.items() if v is not None}
        self.bus.publish_text(protocol.dump(protocol.View(state=state)))

    async def _guard(self, coro):
        """Run worker code; a lab bug puts this session in `error`, never the server."""
        try:
            return await coro
        except LabError:
            raise
        except Exception as exc:
            log.exception("session %s (%s) failed", self.id[:6], self.lab_cls.id)
            self._set_state("error", f"{type(exc).__name__}: {exc}")
            raise SessionError("error", f"the lab failed: {type(exc).__name__}: {exc}") from None

    def _check_can_run(self) -> None:
        if self.state == "diverged":
            raise SessionError("diverged", "the model diverged (loss is not finite); reset it")
        if self.state == "error":
            raise SessionError("error", f"the lab failed ({self.message}); reset it")

    async def play(self, speed: float | None) -> None:
        self._check_can_run()
        if speed:
            self._speed = min(speed, self.settings.max_steps_per_s)
        if self.state in ("playing", "done"):
            self.bus.publish_text(self.status())
            return
        self._stop.clear()
        self._set_state("playing")
        self._player = asyncio.create_task(self._play_loop())

    async def _play_loop(self) -> None:
        epoch = self.epoch
        try:
            while self.state == "playing" and epoch == self.epoch and not self._stop.is_set():
                # Long chunks: each hand-over between loop and worker cost a busy machine
                # ~2% of the steps at 10 a second; a command still gets in after one step.
                run = (self._run, 1_000_000, epoch, False, PLAY_CHUNK_S, True)
                final = await self._guard(self._work(*run))
                if final and epoch == self.epoch:
                    self._finish(final)
                    return
        except SessionError:
            return  # _guard already moved the session to `error`
        except LabError as exc:  # a refusal from inside step: stop playing, say why
            log.info("session %s stopped: %s", self.id[:6], exc)
            self._set_state("error", str(exc))

    def _finish(self, final: str) -> None:
        if final == "diverged":
            msg = f"loss became non-finite at step {self._wstep}; lower the learning rate and reset"
            self.bus.publish_text(protocol.dump(protocol.error("diverged", msg)))
            self._set_state("diverged", msg)
        else:
            self._set_state(final)

    async def _stop_player(self) -> None:
        """The playing chunk ends at its next step; the state stays as it is."""
        self._stop.set()
        if self._player:
            await asyncio.gather(self._player, return_exceptions=True)
            self._player = None

    async def pause(self) -> None:
        await self._stop_player()
        if self.state == "playing":
            # The stop may land between two chunks: the picture of the last step, if unsent.
            await self._guard(self._command(self._flush_frame, self.epoch))
            self._set_state("paused")

    async def step_n(self, count: int) -> None:
        self._check_can_run()
        await self.pause()
        if self.state == "done":
            self.bus.publish_text(self.status())
            return
        count = min(count, self.settings.max_step_count)
        self._stop.clear()
        final = await self._guard(self._command(self._run, count, self.epoch, count <= 50, 3600.0))
        if final:
            self._finish(final)
        else:
            self.bus.publish_text(self.status())
            self._went_idle()

    async def reset(self) -> None:
        await self.pause()
        await self._rebuild()
        self._set_state("paused")

    def interrupt(self) -> None:
        """Stop a running step or play chunk as soon as the current step ends."""
        self._stop.set()

    def nobody_watches(self) -> None:
        """Loop: the last connection left (a closed tab, a class that went home). A run
        nobody watches stops: a playing run pauses (as its driver's pause would), so the
        page that comes back offers to continue it, and a `step` still running (its
        connection gone) ends at its next step. While anyone watches (a class whose
        teacher's tab closed) the run keeps its driver's choice."""
        if len(self.bus) or self._closed:
            return
        if self.state != "playing":
            self.interrupt()  # a later play or step clears it
        elif self._alone is None:
            self._alone = asyncio.get_running_loop().create_task(self._pause_alone())

    async def _pause_alone(self) -> None:
        try:
            async with self.command_lock:  # after a command under way, as the driver's pause
                # A connection that joined meanwhile keeps it playing.
                if len(self.bus) == 0 and self.state == "playing":
                    await self.pause()
                    log.info("session %s paused at step %d: nobody watches", self.id[:6], self.step)
        except SessionError:
            pass  # the lab failed on the way: _guard has put the session in `error`
        finally:
            self._alone = None

    async def _rebuild(self) -> None:
        if self._remote is not None and not self._remote.process.is_alive():
            self._remote.close()  # the lab's process died: its pipe closed, a new one
            self._remote = RemoteWorker(self)
            self._stop = self._remote.stop
        self.epoch += 1
        self.step = 0
        self.timeline.clear()
        self.bus.rewind()
        # Tell clients about the new run before its first scalars reach them.
        self._set_state("paused")
        await self._guard(self._command(self._build))

    async def set_params(self, raw: dict[str, Any]) -> bool:
        """Validate and apply; returns True when the session had to reset."""
        merged = {**self.params.model_dump(), **raw}
        params = validate_params(self.lab_cls, merged, self.settings)
        changed = {k for k in raw if getattr(self.params, k, None) != getattr(params, k)}
        live = changed <= self.lab_cls.live_fields() and self.state not in ("diverged", "error")
        self.params = params
        if live:
            await self._guard(self._command(self._update_live, params))
            # The new picture; the scalars already recorded for this step stay as they were.
            await self._guard(self._command(self._snapshot, self.epoch, self.step == 0))
        else:
            was_playing = self.state == "playing"
            await self.pause()
            await self._rebuild()
            self._set_state("paused")
            if was_playing:
                await self.play(None)
        answer = protocol.ParamsChanged(params=params.model_dump(), reset=not live)
        self.bus.publish_text(protocol.dump(answer))
        return not live

    async def infer(self, data: dict[str, Any]) -> None:
        if self.state == "error":
            self._check_can_run()

        epoch = self.epoch
        loss = await self._guard(self._command(self._infer, data, epoch))
        if loss is not None and epoch == self.epoch:  # the run moved: say so (step, scrubber)
            if self.lab_cls.trains and not math.isfinite(loss):
                self._finish("diverged")
            else:
                self.bus.publish_text(self.status())

    def seek(self, step: int) -> bytes | None:
        data = self.timeline.frame_at(step)
        return None if data is None else wire.patch_header(data, {"replay": True})

    def touch(self) -> None:
        self.last_active = time.monotonic()

    async def close(self) -> None:
        self._closed = True
        self._stop.set()
        self.epoch += 1
        if self._alone is not None:
            self._alone.cancel()
        if self._player:
            self._player.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)
        if self._remote is not None:
            self._remote.close()
