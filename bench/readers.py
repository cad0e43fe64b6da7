"""Readers (issue 18): an article's readers open a lab at once across two replicas behind
nginx, while a class of 200 behind one address follows its teacher.

The hosted topology (bench/hosted_topology.py). A teacher plays `gpt` at 10 steps/s and 200
viewers follow it through nginx (all from 127.0.0.1, as a school's NAT). Then READERS
readers (in PROCS client processes) each open their own session of an embedded lab at once
and take its first step: seconds from the storm's start to that frame, refusals by kind
(`busy` past a replica's session cap is an answer, a timeout is not), each replica's share
and RSS. Every client runs on the same two cores as both replicas and nginx, so the times
say what this one machine does with the whole storm, clients included.
"""

from __future__ import annotations

import collections
import time

from bench.fanout import _ages
from bench.hosted_topology import topology
from bench.procs import Child, ready_all, tell_all
from bench.report import Figure, Result, percentiles
from bench.server import rss_mb

S = "readers"
READERS, PROCS, CLASS, SPEED = 2000, 4, 200, 10.0
LAB = "linear-regression"  # what an article embeds: small, live at once


def _health(replica, tries: int = 6) -> dict:
    """A replica's /api/health, asked again while it is busy (its 5 s timeout ran out once
    right after a storm, with other jobs at load 48 on these two cores)."""
    for i in range(tries):
        try:
            return replica.health()
        except OSError:  # a timeout is one
            if i == tries - 1:
                raise
            time.sleep(5.0)
    raise AssertionError("unreachable")


def run(opts) -> Result:
    readers = 300 if opts.quick else READERS
    cap = readers  # each replica may hold them all: the cap is not what is measured
    env = {
        "SHAOMAI_FRAME_CLOCK": "1",
        "SHAOMAI_LOG_LEVEL": "warning",
        "SHAOMAI_MAX_SESSIONS": str(cap),
        # Loopback is one address; readers of an article come from many.
        "SHAOMAI_MAX_SESSIONS_PER_IP": str(cap * 2),
        "SHAOMAI_SESSIONS_PER_IP_PER_MIN": str(cap * 10),
    }
    res = Result()
    with topology(env, prefix="rd") as top:
        rss0 = {r.name: rss_mb(r.proc.pid) for r in top.replicas}
        teacher = Child(
            "viewers",
            {"url": top.ws_url, "lab": "gpt", "params": {"steps": 20000}, "speed": SPEED,
             "routed": True},
            name="readers-teacher",
        )  # fmt: skip
        kids, crowd = [], []
        try:
            session = teacher.read(120)["session"]
            kids = [
                Child("viewers", {"url": top.ws_url, "session": session, "n": CLASS // 2,
                                  "routed": True}, name=f"readers-class{i}")
                for i in range(2)
            ]  # fmt: skip
            ready_all(kids, 180)
            crowd = [
                Child("readers", {"url": top.ws_url, "lab": LAB, "n": readers // PROCS},
                      name=f"readers-crowd{i}")
                for i in range(PROCS)
            ]  # fmt: skip
            ready_all(crowd, 60)
            tell_all([teacher, *kids], "go")
            time.sleep(3.0)  # the class is following before the storm
            tell_all(crowd, "go")
            for c in crowd:
                c.read(600)  # {"opened": true}: every reader has its frame or its refusal
            held = {r.name: _health(r)["sessions"] for r in top.replicas}
            rss = {r.name: rss_mb(r.proc.pid) for r in top.replicas}
            time.sleep(3.0)
            tell_all([teacher, *kids, *crowd], "stop")
            outs = [k.result(120) for k in kids]
            mine = teacher.result(60)
            storm = [c.result(120) for c in crowd]
        finally:
            for k in [teacher, *kids, *crowd]:
                k.close()

    seconds = [s for o in storm for s in o["seconds"]]
    errors = collections.Counter(e for o in storm for e in o["errors"])
    opened = percentiles(seconds) if seconds else {"p50": None, "p95": None, "p99": None}
    viewers = [fr for o in outs for fr in o["frames"]]
    sent = {s for fr in [*viewers, *mine["frames"]] for (s, _, _) in fr}
    fractions = [len({s for s, _, _ in fr}) / max(1, len(sent)) for fr in viewers]
    lag = percentiles([(r - t) * 1000 for fr in viewers for (_, t, r) in fr])
    ages = [_ages(fr, mine["t_end"]) * 1000 for fr in viewers]
    shares = ", ".join(f"{k} {v}" for k, v in held.items())
    growth = ", ".join(f"{k} +{rss[k] - rss0[k]:.0f}" for k in rss)
    res.figures += [
        Figure(S, f"{readers} readers: lab on screen", float(len(seconds)), "",
               ("≥", float(readers)), note=f"{sum(t <= 60 for t in seconds)} within 60 s; "
               f"refused: {dict(errors) or 'none'}"),
        Figure(S, "reader's first frame p95", opened["p95"], "s",
               note=f"p50 {opened['p50']:.1f} s, p99 {opened['p99']:.1f} s from the storm's start"
               if seconds else "none opened"),
        Figure(S, "sessions per replica", float(min(held.values())), "",
               note=f"{shares} (the class's teacher included)"),
        Figure(S, "replica RSS growth", max(rss[k] - rss0[k] for k in rss), "MB",
               note=f"{growth} MB for its readers' sessions"),
        Figure(S, f"class of {CLASS}: worst viewer's fraction", min(fractions) if fractions
               else None, "", ("≥", 0.99), note=f"{len(viewers)} viewers through nginx, one address"),
        Figure(S, "class lag p95 during the storm", lag["p95"], "ms", ("≤", 250.0),
               note=f"p50 {lag['p50']:.0f} ms; oldest latest frame {max(ages, default=0):.0f} ms"),
    ]  # fmt: skip
    res.raw = {"errors": dict(errors), "held": held, "rss0": rss0, "rss": rss, "lag": lag}
    return res
