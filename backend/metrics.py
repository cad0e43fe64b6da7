"""Prometheus metrics at `/metrics` (prometheus-client's text format): what an operator
watches on each replica.

Counters are this process's totals, bumped where the thing happens (a frame sent, a step
reported, a refusal answered); gauges (sessions, connections, viewers) are read from the
session manager when Prometheus scrapes. Steps per second is `rate(shaomai_steps_total[1m])`
in Prometheus, and also a gauge over the last scrape interval for a quick look.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

_lock = threading.Lock()
_totals = {
    "frames": 0,
    "frames_direct": 0,
    "frames_thinned": 0,
    "frame_bytes": 0,
    "text_bytes": 0,
    "steps": 0,
}
_refusals: Counter[str] = Counter()


def sent_frame(n_bytes: int, direct: bool = False) -> None:
    _totals["frames"] += 1  # the event loop's thread only
    _totals["frames_direct"] += direct  # written from the publishing callback itself
    _totals["frame_bytes"] += n_bytes


def thinned() -> None:
    _totals["frames_thinned"] += 1  # a run's frame no viewer got: a newer one came first


def sent_text(n_bytes: int) -> None:
    _totals["text_bytes"] += n_bytes


def stepped(n: int) -> None:
    with _lock:  # reported from the loop, but cheap to keep safe
        _totals["steps"] += n


def refused(code: str) -> None:
    _refusals[code] += 1


def totals() -> dict[str, int]:
    return {**_totals, "refusals": sum(_refusals.values())}


class ManagerCollector:
    """The metrics of one SessionManager (one replica) at scrape time (prometheus-client is
    imported at the first scrape, not at start-up)."""

    def __init__(self, manager):
        self.manager = manager
        self._last = (time.monotonic(), _totals["steps"])

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        m = self.manager
        replica = m.replica
        labels = ["replica"]

        def gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
            g = GaugeMetricFamily(name, doc, labels=labels)
            g.add_metric([replica], value)
            return g

        def counter(name: str, doc: str, value: float) -> CounterMetricFamily:
            c = CounterMetricFamily(name, doc, labels=labels)
            c.add_metric([replica], value)
            return c

        conns = list(m.connections)
        yield gauge("shaomai_sessions", "Live sessions on this replica", len(m.sessions))
        yield gauge("shaomai_connections", "Open websocket connections", len(conns))
        viewers = sum(1 for c in conns if c.role == "viewer")
        yield gauge("shaomai_viewers", "Connections watching a session they do not drive", viewers)
        own = sum(1 for s in list(m.sessions.values()) if s.in_process)
        yield gauge("shaomai_lab_processes", "Sessions whose lab runs in a process of its own", own)
        recorded = sum(s.timeline.frame_bytes for s in list(m.sessions.values()))
        yield gauge("shaomai_recorded_frame_bytes", "Frames kept for seek, all sessions", recorded)
        yield counter("shaomai_frames_sent", "Tensor frames sent", _totals["frames"])
        direct = _totals["frames_direct"]
        yield counter(
            "shaomai_frames_sent_direct", "Of them, written without a sender task", direct
        )
        yield counter(
            "shaomai_frames_thinned",
            "Run frames a class did not get while the event loop lagged (a newer one went)",
            _totals["frames_thinned"],
        )
        sent = _totals["frame_bytes"] + _totals["text_bytes"]
        yield counter("shaomai_bytes_sent", "Bytes sent on websockets (frames and text)", sent)
        yield counter("shaomai_steps", "Training steps taken by every session", _totals["steps"])
        now, steps = time.monotonic(), _totals["steps"]
        then, before = self._last
        self._last = (now, steps)
        rate = (steps - before) / (now - then) if now > then else 0.0
        yield gauge("shaomai_steps_per_second", "Steps a second since the last scrape", rate)
        refusals = CounterMetricFamily(
            "shaomai_refusals", "Requests refused, by error code", labels=[*labels, "code"]
        )
        for code, n in sorted(_refusals.items()):
            refusals.add_metric([replica, code], n)
        yield refusals


def registry_for(manager):
    """A registry of its own per app (tests build many apps in one process)."""
    from prometheus_client.registry import CollectorRegistry

    registry = CollectorRegistry(auto_describe=False)
    registry.register(ManagerCollector(manager))
    return registry
