"""The lecture bench's processes (bench/lecture.py): Node viewer children, and the CPU and
RSS of the server and its clients sampled over a window."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from bench.procs import Child
from bench.server import RESULTS, ROOT, Server, process_tree

PER_PROC = 250  # viewers per Node process
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_or_0(pid: int) -> float:
    try:
        return cpu_s(pid)
    except OSError:  # ended meanwhile
        return 0.0


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class NodeChild(Child):
    """One `node bench/lecture_viewers.mjs SPEC` process; reads as bench.procs.Child."""

    def __init__(self, spec: dict[str, Any], name: str):  # noqa: D107 (Child's protocol)
        import queue

        RESULTS.mkdir(parents=True, exist_ok=True)
        self.name = name
        err = (RESULTS / f"client-{name}.log").open("w")
        node = shutil.which("node") or "/usr/bin/node"
        self.proc = subprocess.Popen(
            [node, "--no-warnings", "bench/lecture_viewers.mjs"] + [json.dumps(spec)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        err.close()
        self.lines = queue.Queue()
        self._pumper = threading.Thread(target=self._pump, daemon=True)
        self._pumper.start()


def groups(n: int) -> list[int]:
    k = max(1, -(-n // PER_PROC))
    return [n // k + (1 if i < n % k else 0) for i in range(k)]


class Cpu:
    """CPU seconds of the server and of the client processes between start() and stop()."""

    def __init__(self, server: int, clients: list[int]):
        self.pids = {"server": [server], "clients": clients}

    def _now(self) -> dict[str, float]:
        """The server's own and its session processes' (process_tree), and the clients'."""
        server = process_tree(self.pids["server"][0])
        return {
            k: sum(_cpu_or_0(p) for p in (server if k == "server" else pids))
            for k, pids in self.pids.items()
        }

    def start(self) -> None:
        self.t0, self.c0 = time.perf_counter(), self._now()

    def stop(self) -> dict[str, float]:
        c1 = self._now()
        out = {k: c1[k] - self.c0[k] for k in c1}
        out["wall"] = time.perf_counter() - self.t0
        return out


class Rss:
    def __init__(self, srv: Server):
        self.srv, self.values, self.done = srv, [srv.rss()], threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while not self.done.wait(0.5):
            self.values.append(self.srv.rss())

    def stop(self) -> list[float]:
        self.done.set()
        self.thread.join(5)
        self.values.append(self.srv.rss())
        return self.values


def lab_moved(srv: Server, timeout_s: float = 60.0) -> None:
    """The driver shared at its open: wait until the class's lab runs in a process of its
    own (the server's Settings, read from the same environment), so the window measures the
    class, not the move and the fork server's first start."""
    from backend.config import Settings

    settings = Settings()
    if not (settings.class_process or settings.session_process):
        return
    end = time.monotonic() + timeout_s
    while srv.metric("shaomai_lab_processes") < 1:
        if time.monotonic() > end:
            raise RuntimeError(f"the class's lab did not move to a process within {timeout_s} s")
        time.sleep(0.1)
