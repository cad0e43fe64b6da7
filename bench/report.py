"""Figures, their targets, the printed table and the JSON results."""

from __future__ import annotations

import math
import operator
from dataclasses import asdict, dataclass, field
from typing import Any

_OPS = {"≥": operator.ge, "≤": operator.le}


@dataclass
class Figure:
    """One reported number. `target` like ("≤", 15.0); no target means information only."""

    scenario: str
    name: str
    value: float | None
    unit: str = ""
    target: tuple[str, float] | None = None
    baseline: str = ""  # what it is measured against, e.g. "bare loop 61.2 steps/s"
    note: str = ""
    ok: bool | None = None  # computed from target; None for information

    def __post_init__(self) -> None:
        if self.target is not None and self.ok is None:
            op, bound = self.target
            self.ok = (
                self.value is not None and math.isfinite(self.value) and _OPS[op](self.value, bound)
            )

    @property
    def verdict(self) -> str:
        return "" if self.ok is None else ("pass" if self.ok else "MISS")


@dataclass
class Result:
    figures: list[Figure] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None


def percentiles(values: list[float], qs=(50, 95, 99)) -> dict[str, float | None]:
    """Nearest-rank percentiles (no interpolation: every value reported was measured)."""
    xs = sorted(v for v in values if v is not None and math.isfinite(v))
    out: dict[str, float | None] = {}
    for q in qs:
        if not xs:
            out[f"p{q}"] = None
            continue
        k = max(0, math.ceil(q / 100 * len(xs)) - 1)
        out[f"p{q}"] = xs[k]
    return out


def median(values: list[float]) -> float | None:
    return percentiles(values, (50,))["p50"]


def fmt(v: float | None, unit: str = "") -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    a = abs(v)
    if a >= 1000:
        s = f"{v:,.0f}"
    elif a >= 100:
        s = f"{v:.0f}"
    elif a >= 10:
        s = f"{v:.1f}"
    else:
        s = f"{v:.2f}"
    return f"{s} {unit}".strip()


def target_text(f: Figure) -> str:
    if f.target is None:
        return ""
    op, bound = f.target
    return f"{op} {bound:g} {f.unit}".strip()  # exactly as set: 1/8 reads 0.125


def table(figures: list[Figure], markdown: bool = False) -> str:
    """The results as an aligned text table (or a markdown one for docs/benchmarks.md)."""
    rows = [
        (f.scenario, f.name, fmt(f.value, f.unit), target_text(f), f.verdict, f.baseline, f.note)
        for f in figures
    ]
    head = ("scenario", "figure", "value", "target", "", "beside", "note")
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in rows:
            cells = [c.replace("|", "\\|") for c in r]
            cells[4] = {"pass": "✅ pass", "MISS": "❌ miss"}.get(cells[4], "")
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)
    widths = [min(48, max(len(h), *(len(r[i]) for r in rows))) for i, h in enumerate(head)]
    out = []
    for r in [head, *rows]:
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(out)


def figure_from_dict(scenario: str, d: dict[str, Any]) -> Figure:
    target = d.get("target")
    return Figure(
        scenario=d.get("scenario", scenario),
        name=str(d.get("name", "?")),
        value=d.get("value"),
        unit=d.get("unit", ""),
        target=tuple(target) if target else None,
        baseline=d.get("baseline", ""),
        note=d.get("note", ""),
        ok=d.get("ok"),
    )


def to_json(figures: list[Figure]) -> list[dict[str, Any]]:
    return [{**asdict(f), "verdict": f.verdict} for f in figures]
