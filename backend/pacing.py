"""Pacing a playing session: when its next step may start, and which steps send a picture.

Steps start a period apart at least (the requested speed), across the worker's chunks, so a
chunk that ends never makes the next step early. Frames follow a schedule, not "a period
since the last one" (with 15 ms steps that gives a frame per 45 ms: 22 of 30 fps); and a
frame never comes within half a period of the one before (after a long step, such as a
lab's evaluation, the next short step would bunch up behind it).
"""

from __future__ import annotations


class Pacer:
    def __init__(self, frame_fps: float) -> None:
        self.frame_period = 1.0 / frame_fps
        self.due = 0.0  # when the next step may start
        self.step_s = 0.0  # a typical step's time (outliers such as evaluations clipped)
        self.next_frame_t = 0.0  # when the next frame is due
        self.last_frame_t = 0.0  # when the last one was ready

    def wait_s(self, now: float) -> float:
        """How long to wait before the next step may start (≤ 0: now)."""
        return self.due - now

    def start(self, now: float, period: float) -> bool:
        """A step starts now, at most one per `period`; returns whether a frame is due."""
        self.due = max(self.due, now) + period
        return now >= self.next_frame_t and now + self.step_s - self.last_frame_t >= (
            self.frame_period / 2
        )

    def done(self, started: float, ended: float, framed: bool) -> None:
        """The step that started at `started` ended at `ended` (with a frame if `framed`)."""
        self.step_s += 0.25 * (min(ended - started, 2 * self.step_s or 1.0) - self.step_s)
        if framed:
            self.last_frame_t = ended
            self.next_frame_t = max(
                self.next_frame_t + self.frame_period, started + self.frame_period / 2
            )
