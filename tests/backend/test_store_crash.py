"""kill -9 mid-save: the store opens cleanly and every run saved before the kill is whole.

A child process saves large runs in a loop and prints each id once its save has returned.
The test kills it with SIGKILL at a random moment inside a save, several times over, then
opens the store (which runs PRAGMA integrity_check) and reads every run back in full.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from backend.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
FRAMES, FRAME_BYTES = 24, 256 * 1024  # ~6 MB a run, so a save takes a while

# The child: run k's content is a function of k, so the parent can check it byte for byte.
WRITER = textwrap.dedent(
    f"""
    import random, sys, time
    from pathlib import Path
    from backend.store import RunStore
    from backend.saved_run import SavedRun

    def run(k):
        rng = random.Random(k)
        frames = [(s, rng.randbytes({FRAME_BYTES})) for s in range({FRAMES})]
        scalars = [(s, {{"loss": 1.0 / (s + 1)}}) for s in range(500)]
        return SavedRun("", "crash-test", f"run {{k}}", {{"k": k}}, k, 500, float(k),
                        scalars, frames, rng.randbytes(100_000), "")

    store = RunStore(Path(sys.argv[1]))
    k = int(sys.argv[2])
    while True:
        r = run(k)
        print("begin", k, flush=True)
        t = time.monotonic()
        run_id = store.save(r)
        print("saved", run_id, k, time.monotonic() - t, flush=True)
        k += 1
    """
)


def expected(k: int) -> tuple:
    rng = random.Random(k)
    frames = [(s, rng.randbytes(FRAME_BYTES)) for s in range(FRAMES)]
    return frames, rng.randbytes(100_000)


def kill_mid_save(db: Path, start_k: int, rng: random.Random) -> list[tuple[str, int]]:
    """Start a writer, let it save a few runs, SIGKILL it inside a save; returns (id, k) saved."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), str(start_k)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    saved: list[tuple[str, int]] = []
    durations: list[float] = []
    try:
        while True:
            line = proc.stdout.readline()
            assert line, f"the writer exited early (code {proc.poll()})"
            words = line.split()
            if words[0] == "saved":
                saved.append((words[1], int(words[2])))
                durations.append(float(words[3]))
            elif words[0] == "begin" and len(saved) >= 2:
                # Inside this save, at a random point of a typical save's duration.
                time.sleep(rng.uniform(0.0, 1.2) * sum(durations) / len(durations))
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    # Ids printed before the kill landed: their saves returned, so they must be whole.
    for line in proc.stdout.read().splitlines():
        words = line.split()
        if words and words[0] == "saved":
            saved.append((words[1], int(words[2])))
    proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    return saved


@pytest.mark.slow
def test_sigkill_mid_save_loses_nothing_saved(tmp_path):
    db = tmp_path / "runs.db"
    rng = random.Random(1234)
    saved: list[tuple[str, int]] = []
    for kill in range(5):
        saved += kill_mid_save(db, start_k=1000 * kill, rng=rng)
        store = RunStore(db)  # raises StoreError unless PRAGMA integrity_check says ok
        present = {s["id"]: s for s in store.list(limit=1000)}
        # Every run whose save returned is there...
        assert {run_id for run_id, _ in saved} <= present.keys()
        # ...at most one more per kill (committed, killed before it printed its id)...
        assert len(present) <= len(saved) + 5
        # ...and every run in the store, printed or not, is complete: all or nothing.
        for run_id in present:
            run = store.get(run_id)
            frames, weights = expected(run.seed)
            assert run.name == f"run {run.seed}" and run.params == {"k": run.seed}
            got = len(run.frames)
            assert got == FRAMES, f"run {run_id} was stored half: {got} of {FRAMES} frames"
            assert run.frames == frames and run.weights == weights, f"run {run_id} differs"
            assert len(run.scalars) == 500 and run.scalars[-1] == (499, {"loss": 1 / 500})
        store.close()
    assert len(saved) >= 10
