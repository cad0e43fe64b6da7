"""The sessions' worker threads: one torch thread each, memory given back when idle, and a
gate that lets only as many lab steps run at once as there are cores."""

from __future__ import annotations

import collections
import ctypes
import ctypes.util
import functools
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import torch

from backend.config import Settings


def init_worker() -> None:
    # Many sessions share 2 cores: one torch thread each beats oversubscription.
    torch.set_num_threads(1)


@functools.cache
def _accelerated() -> bool:
    return bool(
        torch.cuda.is_available() or torch.backends.mps.is_available() or torch.xpu.is_available()
    )


def manual_seed(seed: int) -> None:
    """torch.manual_seed, minus its accelerator seeding where there is no accelerator: on a
    CPU-only machine it queues a lazy CUDA seed with a `traceback.format_stack()` (a stat of
    every source file on the stack), 8% of a replica's CPU while 1,000 readers opened labs
    at once (docs/benchmarks.md). The CPU generator gets the same seed either way."""
    if _accelerated():
        torch.manual_seed(seed)
    else:
        torch.default_generator.manual_seed(int(seed))


def _libc_trim():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to trim
        return None


_MALLOC_TRIM = _libc_trim()


def trim_memory() -> None:
    """Give the worker thread's freed memory back to the system. glibc keeps each thread's
    malloc arena at its peak (a gpt evaluation's activations: ~13 MB), and an idle session
    would hold that for nothing: 20 paused gpt sessions take 20 MB each, 7 MB trimmed."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


class StepGate:
    """At most `slots` lab steps run at once across all sessions, granted in arrival order.

    Sessions' workers are threads of one process and share one GIL: twenty of them stepping
    at once on two cores mostly trade it back and forth. Measured with 20 gpt labs on 2
    cores: free threads 59-75 steps/s together (slowest/fastest 0.76-0.81), two at a time
    74-101 (0.97). FIFO, because a plain Semaphore lets a releasing thread take its slot
    straight back and starve the others.
    """

    def __init__(self, slots: int):
        self.slots = slots
        self._free = slots
        self._lock = threading.Lock()
        self._waiting: collections.deque[threading.Lock] = collections.deque()

    def _take(self) -> bool:
        """With the lock held: take a free slot if no step waits for one."""
        if self._free and not self._waiting:
            self._free -= 1
            return True
        return False

    def __enter__(self) -> StepGate:
        with self._lock:
            if self._take():
                return self
            turn = threading.Lock()
            turn.acquire()
            self._waiting.append(turn)
        turn.acquire()  # released by the step that hands its slot over
        return self

    def __exit__(self, *exc) -> None:
        self.leave()

    def leave(self) -> None:
        """Give a slot back (to the step waiting longest, if any)."""
        with self._lock:
            if self._waiting:
                self._waiting.popleft().release()  # the slot passes on directly
            else:
                self._free += 1

    def try_enter(self) -> bool:
        """Take a slot only if one is free now and no step waits for it (a spare core);
        never waits. Give it back with `leave`."""
        with self._lock:
            return self._take()


def usable_cores() -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return cores or 1


_GATE: StepGate | None = None
_INIT = threading.Lock()  # worker threads ask for the gate and the pool concurrently


def step_gate(settings: Settings) -> StepGate:
    """The process's gate (sized by the first session's settings: 0 = the usable cores)."""
    global _GATE
    if _GATE is not None:
        return _GATE
    with _INIT:
        if _GATE is None:
            _GATE = StepGate(settings.step_slots or usable_cores())
        return _GATE


@contextmanager
def spare_core() -> Iterator[bool]:
    """Yields True while this thread holds a second slot of the steps' gate, taken only if
    it was free (no other session's step is waiting for it); False: no core to spare. Outside
    any session (a test, a bench stepping a lab itself) the cores are free."""
    gate = _GATE if _GATE is not None else StepGate(usable_cores())
    took = usable_cores() > 1 and gate.try_enter()
    try:
        yield took
    finally:
        if took:
            gate.leave()


# Builds (a new session's model and first picture) pass a gate of their own, in arrival
# order, so a storm of opens finishes them one core at a time, first come first framed,
# instead of a thousand worker threads sharing the GIL with each other and the event loop
# and all finishing late. Apart from the steps' gate: a slow build never holds up a step.
BUILDS = StepGate(usable_cores())


_PICTURES: ThreadPoolExecutor | None = None


def picture_pool() -> ThreadPoolExecutor:
    """Helper threads that draw a frame's picture while a session's backward pass runs.

    A backward pass on the CPU runs mostly without the GIL (~40% of a gpt step; it takes the
    GIL back only to free tensors that have Python objects), so a picture drawn then costs
    the training thread less than one drawn on that thread: measured at 30 frames a second,
    2-3% of a session's steps instead of 5-6% (see Lab.beside_backward). One thread a core:
    at most that many sessions step at once (StepGate)."""
    global _PICTURES
    with _INIT:
        if _PICTURES is None:
            _PICTURES = ThreadPoolExecutor(usable_cores(), "picture", init_worker)
        return _PICTURES


_ARMS: ThreadPoolExecutor | None = None


def arm_pool() -> ThreadPoolExecutor:
    """Helper threads that train a lab's arms beside the session's own thread, on a spare
    core (backend/side_by_side.py); one torch thread each, as the workers."""
    global _ARMS
    with _INIT:
        if _ARMS is None:
            _ARMS = ThreadPoolExecutor(max(1, usable_cores() - 1), "arm", init_worker)
        return _ARMS
