"""A real `python -m backend` in a subprocess, its start time and its memory."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def python_path() -> str:
    """The repository first, then whatever PYTHONPATH already held (on a lent GPU machine
    the web stack's wheels are installed into a folder named there: tools/device_wheels.sh)."""
    return os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def process_tree(pid: int) -> list[int]:
    """pid and every process below it (Linux /proc): a server with
    SHAOMAI_SESSION_PROCESS=1 trains each session in a child of a fork server."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # ended meanwhile
            children.setdefault(ppid, []).append(int(d.name))
    tree = [pid]
    for p in tree:  # grows while it is walked: children, then theirs
        tree += children.get(p, [])
    return tree


def wait_http(url: str, timeout: float, proc: subprocess.Popen | None = None) -> float:
    """Poll url every 10 ms until it answers 200; returns the seconds it took."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return time.perf_counter() - t0
        except OSError:
            time.sleep(0.01)
    raise TimeoutError(f"{url} did not answer within {timeout} s")


class Server:
    """`with Server(env) as s:` starts the app and waits for /api/health; s.url, s.rss()."""

    def __init__(self, env: dict[str, str] | None = None, name: str = "server", module="backend"):
        self.env = env or {}
        self.name = name
        self.module = module
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}/ws"
        self.proc: subprocess.Popen | None = None
        self.start_s = float("nan")  # process start -> /api/health answers

    def start(self, timeout: float = 60.0) -> Server:
        RESULTS.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "PYTHONPATH": python_path(),
            "SHAOMAI_DATA_DIR": tempfile.mkdtemp(prefix="shaomai-bench-"),
            "SHAOMAI_FRAME_CLOCK": "1",
            "SHAOMAI_LOG_LEVEL": "warning",
            **self.env,
        }
        log = (RESULTS / f"{self.name}.log").open("w")
        cmd = [sys.executable, "-m", self.module, "--host", "127.0.0.1", "--port", str(self.port)]
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        try:
            wait_http(f"{self.url}/api/health", timeout, self.proc)
        except Exception:
            self.stop()
            raise
        self.start_s = time.perf_counter() - t0
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def rss(self) -> float:
        """The server's resident memory, its session processes' included (each counts the
        pages it shares with the fork server again: growth, not the total, is compared)."""
        total = 0.0
        for p in process_tree(self.pid):
            try:
                total += rss_mb(p)
            except OSError:
                continue  # ended meanwhile
        return total

    def metric(self, name: str) -> float:
        """One unlabelled-but-replica sample of the server's /metrics (Prometheus text)."""
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.startswith(name + "{") or line.startswith(name + " "):
                    return float(line.rsplit(" ", 1)[1])
        raise KeyError(name)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)

    def __enter__(self) -> Server:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc) -> None:
        self.stop()
