"""Load a model once per process, whichever thread asks first; everyone shares that copy."""

from __future__ import annotations

import functools
import inspect
import threading
import weakref
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def once_per_process(fn: Callable[..., T]) -> Callable[..., T]:
    """Cache fn's result per argument tuple behind a lock: two sessions opening a lab at the
    same moment load the weights once, not twice (functools.lru_cache alone would let both
    threads load, then keep one). `fn.cache_clear()` forgets everything (tests)."""
    results: dict[tuple, T] = {}
    lock = threading.Lock()
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)  # f(), f(True) and f(x=True): one key
        bound.apply_defaults()
        key = tuple(bound.arguments.items())
        with lock:
            if key not in results:
                results[key] = fn(*args, **kwargs)
            return results[key]

    wrapper.cache_clear = results.clear  # type: ignore[attr-defined]
    return wrapper


_LOCKS: weakref.WeakKeyDictionary[object, threading.RLock] = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()


def model_lock(model: object) -> threading.RLock:
    """The one lock of a shared model: hold it around every forward of it.

    `models.hooks.capture` keeps its request on the model's hook points, and attention
    takes its explicit path while one is active: two sessions' threads running the same
    model at once would fill each other's captures (and one's exit would end the other's).
    Serialising the forwards of one shared model avoids that; different models run freely.

        with model_lock(model), capture(model, names) as store, torch.inference_mode():
            logits = model(ids, cache)
    """
    with _LOCKS_GUARD:
        lock = _LOCKS.get(model)
        if lock is None:
            lock = _LOCKS[model] = threading.RLock()
        return lock
