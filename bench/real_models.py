"""Scenario `real`: the chapter-8 labs' real pretrained models through a real server.

- real-llm: from opening the lab to the first generated token, on a fresh server (the
  SmolLM2 GGUF is read and dequantized on first use: cold) and in a second session on the
  same server (the weights are shared: warm);
- greedy tokens/s with and without the new token's attention streamed (and the logit lens
  off in both), one torch thread per session as always: the ratio is what drawing every
  head costs;
- real-bert: a 32-token sentence's forward with every head's attention captured, in process.
"""

from __future__ import annotations

import asyncio
import time

from bench import wsproto as w
from bench.report import Figure, Result, median
from bench.server import Server

S = "real"
PROMPT = "What is the capital of France?"
NEW = 24  # tokens a timed generation asks for (a stop token may end it earlier)
LOAD_TIMEOUT = 300.0  # the first generation loads SmolLM2 (tens of seconds on a busy box)


def _last(meta: dict) -> bool:
    return bool(meta.get("last"))


async def _generate(ws, attention: bool, timeout: float) -> tuple[float, list[float]]:
    """(seconds to the first token's frame, arrival times of every token's frame)."""
    inp = {"prompt": PROMPT, "max_new": NEW, "temperature": 0.0, "attention": attention}
    inp["lens"] = False
    t0 = time.time()
    await w.send(ws, {"type": "infer", "input": inp})
    times: list[float] = []
    while True:
        t, head = await w.until(ws, lambda m, f: f and m.get("infer"), timeout)
        times.append(t)
        if _last(head.get("meta", {})):
            return times[0] - t0, times


def _tokens_per_s(times: list[float]) -> float:
    """Decode speed after the first token (prefill excluded)."""
    return (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else float("nan")


async def _llm(url: str, rounds: int) -> dict:
    out: dict = {"with_attention": [], "without_attention": []}
    t0 = time.perf_counter()
    cold = await w.dial(url)
    try:
        await w.open_lab(cold, "real-llm")
        first, _ = await _generate(cold, True, LOAD_TIMEOUT)
        out["cold_first_token_s"] = time.perf_counter() - t0
        out["cold_generation_first_s"] = first
    finally:
        await cold.close()
    t0 = time.perf_counter()
    warm = await w.dial(url)
    try:
        await w.open_lab(warm, "real-llm")
        await _generate(warm, True, LOAD_TIMEOUT)
        out["warm_first_token_s"] = time.perf_counter() - t0
        for _ in range(rounds):  # alternate, so a noisy second hits both sides
            for key, attention in (("with_attention", True), ("without_attention", False)):
                _, times = await _generate(warm, attention, 120.0)
                out[key].append(_tokens_per_s(times))
    finally:
        await warm.close()
    return out


def _bert_forward_ms(rounds: int) -> list[float]:
    import torch

    from models.hooks import capture
    from models.real import minilm

    torch.set_num_threads(1)
    model, tok = minilm.load_minilm()
    words = "the animal did not cross the street because it was too tired and slow "
    sentence = " ".join((words * 3).split()[:30])  # [CLS] + 30 words + [SEP] = 32 tokens
    batch = minilm.encode(tok, [sentence])
    ids, mask, types = batch.ids, batch.mask, batch.token_types
    assert ids.shape[1] == 32, ids.shape
    out = []
    with torch.inference_mode():
        for i in range(rounds + 2):
            t0 = time.perf_counter()
            with capture(model, "blocks.*.attn.hook_pattern"):
                model(ids, mask, types)
            if i >= 2:  # two warm-up passes
                out.append((time.perf_counter() - t0) * 1000)
    return out


def run(opts) -> Result:
    rounds = 2 if opts.quick else 4
    with Server(name="real") as srv:
        llm = asyncio.run(_llm(srv.ws_url, rounds))
    bert = _bert_forward_ms(10 if opts.quick else 30)
    with_a, without = median(llm["with_attention"]), median(llm["without_attention"])
    res = Result(raw={"llm": llm, "bert_forward_ms": bert})
    res.figures += [
        Figure(S, "real-llm: open → first token (fresh server, loads the GGUF)",
               llm["cold_first_token_s"], "s", note="SmolLM2-135M Q4_1, dequantized once"),
        Figure(S, "real-llm: open → first token (weights already loaded)",
               llm["warm_first_token_s"], "s", note="a second session shares them"),
        Figure(S, "real-llm: greedy tokens/s, attention streamed", with_a, "tok/s",
               note=f"{rounds} runs of {NEW} tokens, 1 thread"),
        Figure(S, "real-llm: greedy tokens/s, no attention", without, "tok/s",
               note="the same, without the 30 × 9 maps"),
        Figure(S, "real-llm: streamed / plain tokens/s", with_a / without, "",
               note="what drawing every head costs"),
        Figure(S, "real-bert: 32-token forward, every head captured", median(bert), "ms",
               note=f"{len(bert)} passes, 1 thread, in process"),
    ]  # fmt: skip
    return res
