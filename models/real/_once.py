"""Load a model once per process, whichever thread asks first; everyone shares that copy."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def once_per_process(fn: Callable[..., T]) -> Callable[..., T]:
    """Cache fn's result per argument tuple behind a lock: two sessions opening a lab at the
    same moment load the weights once, not twice (functools.lru_cache alone would let both
    threads load, then keep one). `fn.cache_clear()` forgets everything (tests)."""
    results: dict[tuple, T] = {}
    lock = threading.Lock()

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        with lock:
            if key not in results:
                results[key] = fn(*args, **kwargs)
            return results[key]

    wrapper.cache_clear = results.clear  # type: ignore[attr-defined]
    return wrapper
