"""The benchmark suite: `python -m bench` (`make bench`). Never part of `make test`.

Every scenario is a module with `run(opts) -> Result`: a list of `Figure`s (a value beside
its baseline, with its target and a pass/miss) and the raw measurements for the JSON file.
Figures are ratios or distributions measured in one run on one machine, because the
machines we run on are shared and noisy. See docs/benchmarks.md.

An extra scenario may be a module with `run() -> dict` (bench/fuzz.py): a dict with a
`figures` list of Figure-like dicts is shown as figures; any other dict is shown as info.

This package is imported by the viewer subprocesses too: keep its top level free of torch.
"""
