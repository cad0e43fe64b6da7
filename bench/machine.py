"""The machine line printed beside every table: cores, load, torch, threads, device."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def loadavg() -> float:
    return os.getloadavg()[0]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _mem_gb() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
        return out.stdout.strip() or "?"
    except OSError:
        return "?"


def facts() -> dict[str, Any]:
    import torch  # the runner's process only: viewer subprocesses never import torch

    from backend.admission import pick_device

    device = pick_device("auto")
    gpu = torch.cuda.get_device_name(0) if device.type == "cuda" else None
    return {
        "cores": os.cpu_count(),
        "cpu": _cpu_model(),
        "mem_gb": round(_mem_gb(), 1),
        "load_at_start": round(loadavg(), 2),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads_default": torch.get_num_threads(),
        "torch_threads_session": 1,  # backend.worker.init_worker
        "device": device.type,
        "gpu": gpu,
        "platform": platform.platform(terse=True),
        "commit": _commit(),
        "argv": sys.argv[1:],
    }


def line(f: dict[str, Any]) -> str:
    dev = f["device"] + (f" ({f['gpu']})" if f.get("gpu") else "")
    return (
        f"{f['cores']} cores ({f['cpu']}), {f['mem_gb']} GB, load {f['load_at_start']}"
        f"→{f.get('load_at_end', '?')}, Python {f['python']}, torch {f['torch']} "
        f"(threads: {f['torch_threads_default']} default, {f['torch_threads_session']} per "
        f"session), device {dev}, commit {f['commit']}"
    )
