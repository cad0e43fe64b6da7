"""Pacing a playing session: when its next step may start, and which steps send a picture.

Steps keep to a schedule a period apart (the requested speed) across the worker's chunks:
a step a little late does not push back every step after it, and one late by a period or
more starts the schedule over, so a pause never brings a burst (`Pacer.start`). Frames
follow a schedule, not "a period since the last one" (with 15 ms steps that gives a frame
per 45 ms: 22 of 30 fps); and a frame never comes within half a period of the one before
(after a long step, such as a lab's evaluation, the next short step would bunch up). Flat out (steps slower than
the speed asked), pictures take at most PICTURE_SHARE of the time: a lab whose picture costs
as much as its step (an encoder-decoder's greedy translation and every map) would otherwise
draw one every step and train at half speed (docs/benchmarks.md, "Time to insight").
"""

from __future__ import annotations

PICTURE_SHARE = 0.2


class Pacer:
    def __init__(self, frame_fps: float) -> None:
        self.frame_period = 1.0 / frame_fps
        self.due = 0.0  # when the next step may start
        self.step_s = 0.0  # a typical step's time (outliers such as evaluations clipped)
        self.next_frame_t = 0.0  # when the next frame is due
        self.last_frame_t = 0.0  # when the last one was ready
        self.picture_s = 0.0  # a frame's cost: its pictures and encoding (a running mean)
        self.gap = self.frame_period  # the frames' period now (longer flat out, see above)

    def wait_s(self, now: float) -> float:
        """How long to wait before the next step may start (≤ 0: now)."""
        return self.due - now

    def start(self, now: float, period: float) -> bool:
        """A step starts now, on a schedule a `period` apart; returns whether a frame is due.

        A step that starts late by less than a period (its thread woke late, or the step
        before was long: an evaluation) keeps the schedule, so the next one may come at once;
        one later than that (a chunk that ended, a pause, steps slower than the pace) starts
        it over from now, so steps never come in a burst to make up for lost time."""
        late = now - self.due
        self.due = (self.due if 0.0 <= late < period else now) + period
        flat_out = period <= self.step_s
        self.gap = max(self.frame_period, self.picture_s / PICTURE_SHARE if flat_out else 0.0)
        return now >= self.next_frame_t and now + self.step_s - self.last_frame_t >= self.gap / 2

    def done(self, started: float, ended: float, framed: bool) -> None:
        """The step that started at `started` ended at `ended` (with a frame if `framed`)."""
        self.step_s += 0.25 * (min(ended - started, 2 * self.step_s or 1.0) - self.step_s)
        if framed:
            self.last_frame_t = ended
            self.next_frame_t = max(self.next_frame_t + self.gap, started + self.gap / 2)

    def pictured(self, seconds: float) -> None:
        """A frame's pictures and encoding took `seconds` (on the worker, beside or in line)."""
        self.picture_s += 0.25 * (seconds - self.picture_s) if self.picture_s else seconds
