"""Class polls: the driver asks, students vote, everyone sees the counts (docs/polls.md).

A session holds at most one poll, in this process (the session's owning replica: every
connection to a session lands there). Votes are kept per student (the page's `voter` id,
else the connection), so a flood or a reconnect counts once; `poll_state` goes out at most
every PUBLISH_EVERY_S, encoded once for every connection, however many votes arrive. A
numeric poll's `truth` is read from the session's own scalars when the run reaches its step.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import math
import secrets
import time
import weakref
from typing import TYPE_CHECKING, Any

from backend import protocol, wire
from backend.admission import SessionError

if TYPE_CHECKING:
    from backend.sessions import Session

log = logging.getLogger("shaomai.polls")
KINDS = frozenset({"poll", "poll_close", "vote"})
PUBLISH_EVERY_S = 0.25  # hundreds of votes a second become four messages per viewer
TRUTH_CHECK_S = 0.1  # how often a numeric poll looks for its step in the timeline
MAX_BINS = 12

_polls: weakref.WeakKeyDictionary[Session, Poll] = weakref.WeakKeyDictionary()
_voters: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()  # conn -> voter


def _err(code: str, message: str, field: str | None, key: str) -> SessionError:
    return SessionError(code, message, field, key)


class Poll:
    def __init__(self, session: Session, msg: protocol.Poll):
        # Weakly: a closed session is dropped by the manager and its poll (and watcher) go.
        self._session = weakref.ref(session)
        self.id = secrets.token_urlsafe(8)
        self.question = msg.question
        self.choices = list(msg.choices or [])
        self.numeric = msg.numeric
        self.answer = msg.answer
        self.lesson = msg.lesson
        self.open = True
        self.truth: float | None = None
        self.votes: dict[str, int | float] = {}  # voter -> choice index or value
        self._published = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._watch: asyncio.Task | None = None

    # -- the state everyone sees ------------------------------------------------------------
    def state(self) -> protocol.PollState:
        common = dict(
            id=self.id,
            question=self.question,
            open=self.open,
            voters=len(self.votes),
            lesson=self.lesson,
        )
        if self.numeric is None:
            counts = [0] * len(self.choices)
            for c in self.votes.values():
                counts[int(c)] += 1
            answer = None if self.open else self.answer
            return protocol.PollState(choices=self.choices, counts=counts, answer=answer, **common)
        edges, counts = histogram(list(self.votes.values()), self.truth)
        truth = None if self.truth is None else wire.json_number(self.truth)
        return protocol.PollState(
            choices=[],
            counts=counts,
            metric=self.numeric.metric,
            step=self.numeric.step,
            edges=edges,
            truth=truth,
            **common,
        )

    def publish_now(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._published = time.monotonic()
        s = self._session()
        if s is not None and _polls.get(s) is self:
            s.bus.publish_text(protocol.dump(self.state()))

    def changed(self) -> None:
        """Publish soon: now if the last one is old enough, else once when it is."""
        if self._timer is not None:
            return
        wait = self._published + PUBLISH_EVERY_S - time.monotonic()
        if wait <= 0:
            self.publish_now()
        else:
            self._timer = asyncio.get_running_loop().call_later(wait, self.publish_now)

    def end(self) -> None:
        for handle in (self._timer, self._watch):
            if handle is not None:
                handle.cancel()

    # -- numeric truth ----------------------------------------------------------------------
    async def watch_truth(self) -> None:
        """Wait for the run to reach the poll's step; its real scalar is the truth."""
        want = self.numeric
        while (s := self._session()) is not None and _polls.get(s) is self:
            _, rows = s.timeline.scalars_after(want.step - 1)
            # The first row from that step on holding the metric (some rows hold others).
            found = next((r[want.metric] for r in rows if want.metric in r), None)
            if found is not None:
                self.truth = float(found)
                self.open = False  # no guessing once the answer is on screen
                return self.publish_now()
            del s  # not held while asleep: a closed session can go
            await asyncio.sleep(TRUTH_CHECK_S)


def histogram(values: list[float], truth: float | None) -> tuple[list[float], list[int]]:
    """Bins of a round width over the guesses (and the truth, so it lands on the chart)."""
    if not values:
        return [], []
    span = values + ([truth] if truth is not None and math.isfinite(truth) else [])
    lo, hi = min(span), max(span)
    if hi - lo <= 1e-12 * max(1.0, abs(hi)):
        pad = abs(lo) * 0.1 or 0.5
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / min(MAX_BINS, max(4, math.ceil(math.sqrt(len(values))) + 2))
    mag = 10 ** math.floor(math.log10(raw))
    width = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / width) * width
    n = max(1, math.ceil((hi - start) / width - 1e-9))
    edges = [round(start + i * width, 12) for i in range(n + 1)]
    counts = [0] * n
    for v in values:
        counts[min(n - 1, max(0, bisect.bisect_right(edges, v) - 1))] += 1
    return edges, counts


# -- the three messages ---------------------------------------------------------------------
def handle(conn: Any, s: Session, msg: Any) -> None:
    """`poll`, `poll_close` (the driver's) or `vote` from connection `conn` of session s."""
    if msg.type != "vote" and conn.role != "driver":
        text = f"viewers cannot `{msg.type}`; the teacher asks the class"
        raise SessionError("forbidden", text, key="err.viewer", values={"action": msg.type})
    if msg.type == "poll":
        return _ask(s, msg)
    poll = _polls.get(s)
    if poll is None:
        raise _err("conflict", "no poll in this session", None, "poll.err_none")
    if msg.type == "poll_close":
        if msg.answer is not None and msg.answer >= len(poll.choices):
            raise _err("bad_message", "answer: not one of the choices", "answer", "poll.err_choice")
        poll.open = False
        poll.answer = msg.answer if msg.answer is not None else poll.answer
        return poll.publish_now()
    _vote(conn, poll, msg)


def _ask(s: Session, msg: protocol.Poll) -> None:
    if msg.numeric is not None:
        step, metric = msg.numeric.step, msg.numeric.metric
        if s.timeline.last_scalar_step >= step:
            text = f"the run is already at step {s.step}, past {step}: reset it, then ask"
            raise _err("conflict", text, "numeric.step", "poll.err_past")
        known = s.timeline.scalars_after(-1)[1]
        if known and metric not in known[-1]:
            names = ", ".join(sorted(known[-1]))
            text = f"numeric.metric: this lab streams {names}, not {metric!r}"
            raise _err("bad_message", text, "numeric.metric", "poll.err_metric")
    old = _polls.get(s)
    if old is not None:
        old.end()
    poll = _polls[s] = Poll(s, msg)
    if poll.numeric is not None:
        poll._watch = asyncio.get_running_loop().create_task(poll.watch_truth())
    poll.publish_now()
    log.info("session %s: a %s poll", s.id[:6], "numeric" if msg.numeric else "choice")


def _vote(conn: Any, poll: Poll, msg: protocol.Vote) -> None:
    if msg.poll is not None and msg.poll != poll.id:
        raise _err("conflict", "that poll is over; a new one is open", "poll", "poll.err_stale")
    if not poll.open:
        raise _err("conflict", "voting on this poll is closed", None, "poll.err_closed")
    if poll.numeric is None:
        if msg.choice is None:
            raise _err("bad_message", "choice: this poll takes a choice", "choice", "poll.err_kind")
        if msg.choice >= len(poll.choices):
            raise _err("bad_message", "choice: not one of the choices", "choice", "poll.err_choice")
        answer: int | float = msg.choice
    else:
        if msg.value is None:
            raise _err("bad_message", "value: this poll takes a number", "value", "poll.err_kind")
        answer = msg.value
    # A connection votes as one student: the first voter id it gives stays its own, so
    # a flood of votes under made-up ids from one socket still counts once.
    voter = _voters.get(conn)
    if voter is None:
        voter = _voters[conn] = msg.voter or f"conn-{secrets.token_urlsafe(12)}"
    if poll.votes.get(voter) != answer:
        poll.votes[voter] = answer
        poll.changed()


def on_attach(conn: Any, s: Session) -> None:
    """A connection joined s (a late joiner, a reconnect): the poll as it stands."""
    poll = _polls.get(s)
    if poll is not None:
        conn.reply(poll.state())
