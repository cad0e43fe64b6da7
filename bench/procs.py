"""The parent side of bench/clients.py: start a client process, exchange lines, bounded."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from typing import Any

from bench.server import RESULTS, ROOT, python_path


class Child:
    """One `python -m bench.clients ROLE SPEC` process; every read has a timeout."""

    def __init__(self, role: str, spec: dict[str, Any], name: str | None = None):
        RESULTS.mkdir(parents=True, exist_ok=True)
        self.name = name or role
        err = (RESULTS / f"client-{self.name}.log").open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.clients", role, json.dumps(spec)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": python_path()},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        err.close()
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._pumper = threading.Thread(target=self._pump, daemon=True)
        self._pumper.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def read(self, timeout: float) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"client {self.name} said nothing for {timeout} s") from None
        if line is None:
            log = (RESULTS / f"client-{self.name}.log").read_text()[-1500:]
            raise RuntimeError(f"client {self.name} exited: {log}")
        return json.loads(line)

    def tell(self, command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def result(self, timeout: float) -> dict[str, Any]:
        while True:
            msg = self.read(timeout)
            if "result" in msg:
                return msg["result"]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(5)
        self._pumper.join(5)  # it reads stdout to its end
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):  # a broken pipe to a dead child
                    pipe.close()


def ready_all(children: list[Child], timeout: float) -> list[dict[str, Any]]:
    return [c.read(timeout) for c in children]


def tell_all(children: list[Child], command: str) -> None:
    for c in children:
        c.tell(command)
