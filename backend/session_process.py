"""A session's worker in a process of its own (Settings.session_process), for a lecture hall.

In one process the training thread and the event loop share the GIL: torch lets it go
inside each kernel and takes it back between ops, so while the loop fans a frame out to
1,000 sockets a 6 × 8 `gpt` step takes 2–3× its time alone (docs/lecture.md). Here the
lab lives in a child process (forked from a fork server that has imported torch and the
labs and runs no threads, so no lock or thread pool is forked) that runs the same
WorkerSide code; the session's worker thread forwards each job
and waits on a pipe without the GIL. What the worker sends the loop (`_report`,
`_publish_frame`: scalars rows and encoded frames, bytes) comes back over the pipe in
order and is handed to the loop as before. Only named jobs, their arguments and results
cross (params, state dicts, bytes): frames are encoded in the child.

The loop-side counters a job reads live in shared values: `_stop` (pause, interrupt), the
commands submitted (a playing chunk yields to a waiting command). Per job the parent sends
what the worker would have read from the session: the run's epoch, the play speed and
how many connections watch (whether the arms may take a second core). The steps' gate
(one lab step a core, backend/worker.py) is per process: a child's steps are not counted
against other sessions'. Off by default: a child costs memory of its own (torch and the labs, shared
copy-on-write with the fork server at first).
"""

from __future__ import annotations

import faulthandler
import functools
import logging
import multiprocessing as mp
import threading
from multiprocessing import forkserver
from typing import Any

from backend import pipe_pickle
from backend.config import Settings
from backend.labs.base import LabError
from backend.session_worker import WorkerSide

log = logging.getLogger("shaomai.session_process")

_CTX = mp.get_context("forkserver")


@functools.cache
def _preloaded() -> None:
    """The fork server (one quiet process, started once) imports torch and every lab
    before it forks any child: a child is ready in a fraction of a second, not ~2 s."""
    from backend.labs import REGISTRY, load_all

    load_all()
    modules = sorted({cls.__module__ for cls in REGISTRY.values()})
    _CTX.set_forkserver_preload(["backend.session_process", *modules, "backend.fork_server_warm"])


def warm_up() -> None:
    """Start the fork server now and wait until it has imported torch and the labs (blocking,
    ~2–3 s the first time), so that no session waits for it: a session moving into a process
    (Session.move_to_process) stops its training only once a fork is quick."""
    _preloaded()
    forkserver.ensure_running()
    _first_fork()


@functools.cache
def _first_fork() -> None:
    child = _CTX.Process(target=_nothing, name="fork-server-ready")
    child.start()  # the fork server answers once its preload is done
    child.join()


def _nothing() -> None:
    """A child that ends at once (the fork server's first)."""


class RemoteError(Exception):
    """A lab's failure in the child, raised again in the parent with its type's name."""


def _failure(kind: str, message: str) -> Exception:
    return type(kind, (RemoteError,), {})(message)


class _Pipe:
    """The child's stand-in for the session's event loop: what the worker would have
    scheduled on it is sent to the parent, in order, by name."""

    def __init__(self, conn) -> None:
        self.conn = conn

    def call_soon_threadsafe(self, fn, *args) -> None:
        pipe_pickle.send(self.conn, ("call", fn.__name__, args))


class _Watchers:
    n = 0  # connections of the session, as of the job's start

    def __len__(self) -> int:
        return self.n


class _Child(WorkerSide):
    def __init__(self, conn, lab_id: str, seed: int, settings: Settings, device, shared) -> None:
        from backend.labs import load_all

        self.lab_cls = load_all()[lab_id]
        self.params = None
        self.seed, self.settings, self.device = seed, settings, device
        self.lab = None
        self.epoch = 0
        self.bus = _Watchers()
        self._loop = _Pipe(conn)
        self._stop, self._submitted_v, self._started_v = shared
        self._init_worker_state(settings)

    @property
    def _submitted(self) -> int:
        return self._submitted_v.value

    @property
    def _started(self) -> int:
        return self._started_v.value

    # Scheduled by their names on the parent's loop (see _Pipe), never run here.
    def _report(self, *args) -> None:
        raise AssertionError("only sent to the parent")

    def _publish_frame(self, *args) -> None:
        raise AssertionError("only sent to the parent")


def _next_job(conn) -> Any:
    """The parent's next job; None to end (asked, or the server ended without a word)."""
    try:
        return pipe_pickle.recv(conn)
    except (EOFError, OSError):
        return None


def child_start() -> None:
    """What a session process does first, before any job (and any helper thread)."""
    from backend.warm_torch import first_products
    from backend.worker import init_worker

    faulthandler.enable(all_threads=True)  # a crash leaves its stacks in the server's log
    init_worker()
    first_products()  # on this thread, before a helper's: backend/warm_torch.py


def _child_main(conn, init: dict[str, Any]) -> None:
    child_start()
    worker = _Child(conn, **init)
    pipe_pickle.send(conn, ("ready", None))  # its shared values are open: see RemoteWorker
    while (msg := _next_job(conn)) is not None:
        name, args, job = msg
        worker.epoch, worker._speed, worker.bus.n = job["epoch"], job["speed"], job["watchers"]
        worker.params = job["params"]
        if job["command"]:
            with worker._started_v.get_lock():
                worker._started_v.value += 1
        try:
            result = getattr(worker, name)(*args)
        except LabError as exc:
            pipe_pickle.send(
                conn, ("lab_error", (str(exc), exc.code, exc.field, exc.key, exc.values))
            )
        except Exception as exc:  # noqa: BLE001 - the parent's _guard reports it
            log.exception("session job %s failed", name)
            pipe_pickle.send(conn, ("failed", (type(exc).__name__, str(exc))))
        else:
            pipe_pickle.send(conn, ("done", (result, worker._wstep, worker._framed_step)))


class RemoteWorker:
    """The parent's handle on a child: `call` runs one WorkerSide job there (blocking: call
    it on the session's worker thread), scheduling what it reports on `session`'s loop."""

    def __init__(self, session, wait: bool = False) -> None:
        """With `wait`, return once the child runs (blocking: off the event loop), so a
        server that ends right after cannot take the shared values from a child still
        starting (the fork server then printed a FileNotFoundError)."""
        _preloaded()
        self.session = session
        self.stop = _CTX.Event()
        # The commands so far, as the session counts them (a lab that moved here, or a new
        # process after one died, starts with the session's count: no command is waiting).
        self.submitted = _CTX.Value("q", session._submitted)
        self.started = _CTX.Value("q", session._submitted)
        self.conn, child_conn = _CTX.Pipe()
        init = {
            "lab_id": session.lab_cls.id,
            "seed": session.seed,
            "settings": session.settings,
            "device": session.device,
            "shared": (self.stop, self.submitted, self.started),
        }
        self.process = _CTX.Process(
            target=_child_main, args=(child_conn, init), name=f"session-{session.id[:6]}"
        )
        self.process.daemon = True
        self.process.start()
        child_conn.close()
        self._lock = threading.Lock()
        if wait:  # the child's first message (else `call` passes it by)
            kind, _ = pipe_pickle.recv(self.conn)
            assert kind == "ready", kind

    def call(self, name: str, args: tuple, command: bool) -> Any:
        """Run the job `name(*args)` in the child; what it reports meanwhile goes to the
        loop in order; its result (or its error) comes back."""
        s = self.session
        job = {
            "epoch": s.epoch,
            "speed": s._speed,
            "watchers": len(s.bus),
            "params": s.params,
            "command": command,
        }
        with self._lock:
            try:
                pipe_pickle.send(self.conn, (name, args, job))
            except OSError:  # a broken pipe: the child is gone
                raise _failure("ChildExited", "the session's process ended") from None
            while True:
                try:
                    msg = pipe_pickle.recv(self.conn)
                except (EOFError, OSError):  # it ended (killed, out of memory) mid-job
                    raise _failure("ChildExited", "the session's process ended") from None
                if msg[0] == "ready":  # the child's first message, if not waited for
                    continue
                if msg[0] == "call":  # a report of the worker, for the loop
                    s._loop.call_soon_threadsafe(getattr(s, msg[1]), *msg[2])
                    continue
                kind, body = msg
                if kind == "done":
                    result, s._wstep, s._framed_step = body
                    return result
                if kind == "lab_error":
                    raise LabError(*body)
                raise _failure(*body)

    def commands(self, submitted: int) -> None:
        """The loop's count of commands submitted, for the child's playing chunk."""
        self.submitted.value = submitted

    def close(self) -> None:
        """Ask the child to end (after its current job; the session's stop is set), then
        make sure it did, off the event loop."""

        def end() -> None:
            if self._lock.acquire(timeout=5.0):  # the job under way ends at its next step
                try:
                    pipe_pickle.send(self.conn, None)
                except (OSError, ValueError):
                    pass
                finally:
                    self._lock.release()
            self.process.join(5.0)
            if self.process.is_alive():
                self.process.terminate()
            self.conn.close()

        threading.Thread(target=end, name="session-process-end", daemon=True).start()
