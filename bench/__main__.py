"""`python -m bench [--quick] [--only a,b]`: run the scenarios, print the table, save JSON.

Results go to bench/results/latest.json (and a timestamped copy); `--markdown` also prints
the table as markdown for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
import time
import traceback
from pathlib import Path

from bench import machine
from bench.report import Figure, Result, figure_from_dict, table, to_json
from bench.server import RESULTS

# Run order: cheap and quiet first; fan-out and concurrency load the machine hardest.
SCENARIOS = {
    "bytes": "bench.frame_bytes",
    "overhead": "bench.overhead",  # scenarios 1 and 2 (latency) share one server
    "start": "bench.start",
    "drawing": "bench.drawing",
    "limit": "bench.limit",
    "fanout": "bench.fanout",
    "lecture": "bench.lecture",  # 1,000 Node viewers of one session, phones, a join storm
    "concurrency": "bench.concurrency",
    "real": "bench.real_models",  # chapter 8: SmolLM2 and MiniLM through a real server
    "hosted": "bench.hosted",  # two replicas behind nginx with Redis and PostgreSQL
    "readers": "bench.readers",  # 2,000 readers across replicas while a class follows
    "insight": "bench.insight",  # issue 19: every lab, open → first frame → its effect
    "gpu": "bench.gpu",  # issue 19: a ~10M GPT live on CUDA (reports "not run" without one)
    "fuzz": "bench.fuzz",  # an extra scenario, when present: run() -> dict
}


def _run_one(name: str, module: str, opts) -> Result | None:
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            return None  # an optional scenario that is not there
        raise
    t0 = time.perf_counter()
    try:
        if name == "fuzz":
            out = mod.run()
            res = Result(raw=out)
            figs = out.get("figures") if isinstance(out, dict) else None
            if figs:
                res.figures = [figure_from_dict(name, f) for f in figs]
            elif isinstance(out, dict):
                res.figures = [
                    Figure(
                        name,
                        str(k),
                        v if isinstance(v, (int, float)) else None,
                        note="" if isinstance(v, (int, float)) else str(v)[:60],
                    )
                    for k, v in out.items()
                ]
        else:
            res = mod.run(opts)
    except Exception as exc:
        traceback.print_exc()
        res = Result(error=f"{type(exc).__name__}: {exc}")
        res.figures = [Figure(name, "scenario failed", None, "", ("≥", 0.0), note=res.error[:80])]
    res.seconds = time.perf_counter() - t0
    return res


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter runs (fan-out 15 s)")
    parser.add_argument(
        "--only", default="", help="comma-separated scenarios: " + ",".join(SCENARIOS)
    )
    parser.add_argument("--markdown", action="store_true", help="also print a markdown table")
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.json")
    opts = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    chosen = [s for s in opts.only.split(",") if s] or list(SCENARIOS)
    unknown = set(chosen) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(sorted(unknown))}")

    facts = machine.facts()
    print(f"machine: {machine.line(facts)}", flush=True)
    t0 = time.perf_counter()
    results: dict[str, Result] = {}
    for name in chosen:
        print(f"-- {name} …", flush=True)
        res = _run_one(name, SCENARIOS[name], opts)
        if res is None:
            print("   (not present)", flush=True)
            continue
        results[name] = res
        print(table(res.figures), flush=True)
        print(f"   ({res.seconds:.0f} s, load {machine.loadavg():.1f})", flush=True)
    facts["load_at_end"] = round(machine.loadavg(), 2)
    facts["seconds"] = round(time.perf_counter() - t0, 1)
    figures = [f for r in results.values() for f in r.figures]

    print()
    print(f"machine: {machine.line(facts)}")
    print(f"total: {facts['seconds']:.0f} s{' (--quick)' if opts.quick else ''}")
    print(table(figures))
    missed = [f for f in figures if f.ok is False]
    print(f"\n{sum(f.ok is True for f in figures)} targets met, {len(missed)} missed")
    if opts.markdown:
        print("\n" + table(figures, markdown=True))

    out = {
        "machine": facts,
        "quick": opts.quick,
        "figures": to_json(figures),
        "scenarios": {
            k: {"seconds": r.seconds, "error": r.error, "raw": r.raw} for k, r in results.items()
        },
    }
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(out, indent=1, default=str)
    opts.out.write_text(text)
    (opts.out.parent / time.strftime("bench-%Y%m%d-%H%M%S.json")).write_text(text)
    print(f"results: {opts.out}")
    return 1 if any(r.error for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
