"""The worker side of a Session: what runs on its worker thread (build, steps, pictures).

Kept apart from the loop side (sessions.py) because the two never run on the same thread:
everything here reaches the loop only through `call_soon_threadsafe(self._report, ...)`.
"""

from __future__ import annotations

import copy
import math
import time
from typing import Any

from backend import wire
from backend.pacing import Pacer
from backend.worker import BUILDS, manual_seed, step_gate

# Steps' scalars reach the loop in batches at most this far apart (or with a frame): a
# wake-up of the event loop for every step cost a gpt session ~1% of its steps, and the
# connections send scalars at most 30 times a second anyway (connection.SCALARS_EVERY_S).
REPORT_EVERY_S = 1 / 30
# A lab's arms may train on a second core (parallel_arms) only while the session has at
# most this many connections (a learner's tab and an embed or two); a class's fan-out
# needs that core for its sends.
SPREAD_CONNECTIONS = 4


class WorkerSide:
    """Mixed into Session, whose attributes it uses: lab, lab_cls, params, seed, device,
    settings, epoch, bus, _loop, _stop, _pacer, _speed, _wstep, _framed_step, _unsent,
    _reported_at, _submitted, _started, _report and _publish_frame."""

    def _init_worker_state(self, settings) -> None:
        """What only the worker reads and writes (in the session, or in its process)."""
        self._speed = settings.max_steps_per_s
        self._wstep = 0  # the worker's step counter
        self._framed_step = -1  # the last step whose picture was sent
        self._drawn_s = 0.0  # the lab's picture_s when the last frame was encoded
        self._unsent: list[tuple[int, dict]] = []  # the worker's steps not yet reported
        self._reported_at = 0.0  # when the worker last reported
        self._pacer = Pacer(settings.frame_fps)  # steps at the speed asked, frames at fps

    def _build(self, state: dict | None = None, step: int = 0, framed: int | None = None) -> None:
        """A new lab, or with `state` a fork's or a saved run's going on from `step`; with
        `framed` (the step last pictured) a lab that moved here (Session.move_to_process):
        the run goes on as it was, and no frame is sent again."""
        with BUILDS:  # in arrival order, a core at a time (backend/worker.py)
            manual_seed(self.seed)
            self.lab = self.lab_cls(self.params, self.seed, self.device)
            self._drawn_s = 0.0  # the new lab's picture_s starts again
            if state is not None:  # a fork or a saved run: the weights and the step go on
                self.lab.load_state_dict(state)
            self._wstep = step
            if framed is None:
                self._snapshot(self.epoch)
            else:
                self._framed_step = framed

    def _extra(self, epoch: int, **more: Any) -> dict[str, Any]:
        """Header fields of a frame this session encodes (run; t when frame_clock is on)."""
        out: dict[str, Any] = {**more, "run": epoch}
        if self.settings.frame_clock:
            out["t"] = round(time.time(), 4)
        return out

    def _update_live(self, params) -> None:
        self.lab.update_live(params)

    def _infer(self, data: dict[str, Any], epoch: int) -> float | None:
        """Publish each frame of the lab's answer; returns the loss of the last one that
        advanced the run (a training step taken by hand), if any."""
        loss = None
        for frame in self.lab.infer(data):
            if frame.advanced:  # a training step taken by hand: recorded like any step
                self._wstep += 1
                self._framed_step = self._wstep
                loss = frame.scalars.get("loss", 0.0)
            frame.step = self._wstep
            buf = wire.encode(frame, self._extra(epoch, infer=True))
            if frame.advanced:
                report = (self._report, epoch, [(self._wstep, frame.scalars)])
                self._loop.call_soon_threadsafe(*report, (self._wstep, buf))
            else:
                self._loop.call_soon_threadsafe(self._publish_frame, buf)
        return loss

    def _copy_state(self, finish: bool = False) -> dict:
        """`finish`: for a fork or a move, work in parts under way is finished first (its
        numbers then reach both runs), not left behind."""
        if finish:
            self.lab.finish_parts()
        return copy.deepcopy(self.lab.state_dict())

    def _snapshot(self, epoch: int, record_scalars: bool = True) -> None:
        frame = self.lab.snapshot()
        frame.step = self._framed_step = self._wstep
        data = wire.encode(frame, self._extra(epoch))
        rows = [(self._wstep, frame.scalars)] if record_scalars else []
        self._loop.call_soon_threadsafe(self._report, epoch, rows, (self._wstep, data))

    def _run(
        self, n: int, epoch: int, every_frame: bool, budget_s: float, playing: bool = False
    ) -> str | None:
        """Run up to n steps (or budget_s seconds, or, if `playing`, until a command waits
        for the worker); returns a final state or None. Only play keeps to the play speed: a
        pressed `step` runs at once. A picture still being drawn beside the backward pass
        (Lab.pictures_later) is finished and sent before the worker moves on."""
        try:
            return self._steps(n, epoch, every_frame, budget_s, playing)
        finally:
            self.lab.settle()
            self._flush(epoch)

    def _steps(self, n: int, epoch: int, every_frame: bool, budget_s: float, playing: bool):
        t0 = time.monotonic()
        period = 1.0 / self._speed if playing else 0.0
        for i in range(n):
            if self._stop.is_set() or (playing and self._submitted != self._started):
                return None
            # Asked every step: a lab may finish early (a tokenizer out of merges).
            own = self.lab.max_steps()  # None: no limit of its own; 0: nothing to run
            limit = self.settings.max_steps if own is None else min(own, self.settings.max_steps)
            if self._wstep >= limit:
                return "done"
            wait = self._pacer.wait_s(time.monotonic()) if playing else 0.0
            if wait > 0 and self._stop.wait(wait):  # returns early on pause
                return None
            with step_gate(self.settings):
                if self._stop.is_set():  # paused while waiting for a slot
                    return None
                self.lab.may_spread = len(self.bus) <= SPREAD_CONNECTIONS
                now = time.monotonic()
                frame_due = self._pacer.start(now, period)
                last = i == n - 1 or self._wstep + 1 >= limit  # the final picture is always sent
                capture = every_frame or last or frame_due
                # Drawn beside the next step's backward only when that step comes at once
                # (flat out); at a set pace the picture would wait for it.
                if capture and not last and self.lab.pictures_later and self._flat_out(period):
                    frame = self.lab.step(True, later=True)
                else:
                    frame = self.lab.step(capture)
                self._pacer.done(now, time.monotonic(), capture)
            self._wstep += 1
            frame.step = self._wstep
            loss = frame.scalars.get("loss")
            finite = loss is None or math.isfinite(loss)
            self._unsent.append((self._wstep, frame.scalars))
            if capture:
                self._framed_step = self._wstep
                if frame.finish is not None and finite:  # sent with the steps before it
                    rows = self._take_unsent()
                    self.lab.defer(lambda f=frame, r=rows: self._send_later(f, epoch, r))
                else:
                    self._flush(epoch, (self._wstep, self._encode(frame, epoch)))
            elif not finite and self.lab.trains:  # show the whole picture of where it blew up
                full = self.lab.snapshot()
                full.step, full.scalars = self._wstep, frame.scalars
                self._flush(epoch, (self._wstep, self._encode(full, epoch)))
            elif time.monotonic() - self._reported_at >= REPORT_EVERY_S:
                self._flush(epoch)
            if self.lab.trains and not finite:
                return "diverged"
            if time.monotonic() - t0 >= budget_s:
                return None
        return None

    def _flat_out(self, period: float) -> bool:
        """Does the next step start as soon as this one ends (steps slower than the pace)?"""
        return period <= self._pacer.step_s

    def _encode(self, frame: wire.Frame, epoch: int) -> bytes:
        if frame.finish is not None:
            frame.finish()
        t0 = time.perf_counter()
        data = wire.encode(frame, self._extra(epoch))
        drawn = self.lab.picture_s  # seconds drawing so far (a TrainingLab times them)
        self._pacer.pictured(time.perf_counter() - t0 + drawn - self._drawn_s)
        self._drawn_s = drawn
        return data

    def _take_unsent(self) -> list[tuple[int, dict]]:
        """The steps not yet reported; from now on they count as reported."""
        rows, self._unsent = self._unsent, []
        self._reported_at = time.monotonic()
        return rows

    def _flush(self, epoch: int, frame: tuple[int, bytes] | None = None) -> None:
        """Report the steps not yet reported (and a frame) to the loop in one wake-up."""
        rows = self._take_unsent()
        if rows or frame is not None:
            self._loop.call_soon_threadsafe(self._report, epoch, rows, frame)

    def _send_later(self, frame: wire.Frame, epoch: int, rows: list[tuple[int, dict]]) -> None:
        """A picture drawn beside a backward pass (or at settle), sent with its step and the
        steps before it that were not reported yet."""
        report = (epoch, rows, (frame.step, self._encode(frame, epoch)))
        self._loop.call_soon_threadsafe(self._report, *report)

    def _flush_frame(self, epoch: int) -> None:
        """Send the current step's picture if the last step ran without one."""
        if self._framed_step != self._wstep and self.lab is not None:
            # The step's scalars are already recorded; the snapshot only adds the picture.
            self._snapshot(epoch, record_scalars=False)
