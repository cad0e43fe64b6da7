"""Scenario `insight` (issue 19): time to insight for every lab of the catalog, in Chromium.

For each lab (GET /api/labs), in a fresh browser context: (1) navigation start → the first
frame drawn (the shell shows a frame's step, or, for a lab whose view draws without a
frame, its first chart or canvas), and (2) for a training lab, navigation start → the
animation frame after the lab's headline effect arrived, with play pressed as soon as the
page lets a learner press it. The effect is a condition on what the lab trained (the
latest frame's and scalar rows' values, or its meta), never a timer: INSIGHT below, one
entry per lab. A lab without training gets None there and only (1).

Beside each figure, the server alone to the same step (no page: bench/insight_alone.py),
since here the page and the server share two cores.

`.venv/bin/python -m bench --only insight` runs it inside the bench table;
`.venv/bin/python -m bench.insight [--runs N] [lab ...]` runs some labs (each N times, the
median kept) and prints markdown rows.
"""

from __future__ import annotations

import json
import logging
import math
import sys
import urllib.request

from bench.browser import chromium, new_page, wait_js
from bench.insight_alone import seconds_to_step
from bench.report import Figure, Result
from bench.server import Server

S = "insight"
PER_LAB_S = 45.0  # a lab that has not shown its effect by then is reported as not reached

# lab → (JS predicate over s = the latest scalars (frame scalars and scalar rows merged)
#        and m = the latest frame's meta, what it means). Numbers from CURRICULUM.md or the
#        lab's own "solved"/target readouts; None: the lab does not train.
INSIGHT: dict[str, tuple[str, str] | None] = {
    "apple": ("s.loss < 1e-3", "loss (3x−6)² below 0.001: x at the optimum 2"),
    "linear-regression": ("s.loss < 1e-3", "loss below 0.001: the line through both points"),
    "live-stream": (
        "m && s.loss < 2 * m.optimum_loss",
        "MSE within 2× the closed-form optimum's (≈ 19,565 after 20,000 epochs)",
    ),
    "temperature": (
        "m && s.loss < 1.05 * m.optimum_loss",
        "train loss within 5% of the least-squares optimum (A/C, B/C in the valley)",
    ),
    "logistic": ("s.loss < 0.4", "cross-entropy below 0.4: the boundary settled (≈ 82% right)"),
    "softmax-ce": None,
    "svm": ("s.accuracy >= 0.95", "≥ 95% of the points on their side of the margin"),
    "relu-kink": None,  # plays only in its `fit` mode, not on the defaults
    "activations": None,
    "mlp-playground": ("s.test_acc >= 0.9", "test accuracy ≥ 90%"),
    "digits": ("s.test_acc >= 0.9", "test accuracy ≥ 90% (the whole test split)"),
    "depth": (
        "s['arm.2.test_acc'] >= 0.9",
        "the residual · Kaiming · ReLU arm ≥ 90% test accuracy (the plain one stuck)",
    ),
    "optimizers": (
        "arms('loss').length > 0 && arms('loss').every((v) => v < 1e-3)",
        "every optimizer within 0.001 of the minimum",
    ),
    "conv": None,
    "cnn": ("s['arm.0.test_acc'] >= 0.9", "test accuracy ≥ 90%"),
    "regularization": ("s['arm.0.val_acc'] >= 0.9", "validation accuracy ≥ 90% (first arm)"),
    "rnn": ("s.loss < 1.5", "loss below 1.5 nats/char (words appear in samples)"),
    "memory": ("s['arm.2.held_acc'] >= 0.9", "LSTM recall after the delay ≥ 90% (held out)"),
    "seq2seq": ("s['arm.1.seq_acc'] >= 0.9", "with attention: ≥ 90% exact sequences"),
    "embeddings": (
        "s.loss < 0.5",
        "training loss below 0.5 (the 1,500-step run ends near 0.19)",
    ),
    "tokenizer": None,
    "positional-encoding": ("s.seq_accuracy >= 0.9", "≥ 90% exact sequences"),
    "attention": None,
    "gpt": ("m && m.solved_at", "attention solved: held-out exact-sequence accuracy > 95%"),
    "transformer": ("m && m.solved_at", "translation solved: held-out exact > 95%"),
    "kv-cache": None,
    "attention-variants": ("solved(m)", "the first variant solved (held-out exact > 95%)"),
    "positions": (
        "arms('train_acc').some((v) => v >= 0.9)",
        "a position scheme ≥ 90% train accuracy",
    ),
    "norms": ("arms('seq_acc').some((v) => v >= 0.9)", "a norm placement ≥ 90% exact"),
    "ffn-moe": ("arms('loss').some((v) => v < 1.0)", "an FFN's train loss below 1.0 (from ≈ 2.8)"),
    "sparse-attention": ("arms('loss').some((v) => v < 1.0)", "a mask's loss below 1.0"),
    "linear-attention": (
        "arms('acc_rebound').some((v) => v >= 0.9)",
        "a memory recalls the rewritten value ≥ 90% (the delta rule; plain sums stay stale)",
    ),
    "real-bert": None,
    "real-llm": None,
}

# Installed before the page's scripts (beside bench.browser.PROBE): the first animation
# frame at which the view holds a chart or a canvas (labs that draw without a frame). Looked
# for every 10 ms, not at every animation frame: a loop of those would keep the page
# rendering (bench.browser.PROBE).
VIEW_PROBE = """
(() => {
  const b = window.__insight = { view: null, met: null, s: {}, m: null, state: null };
  const look = () => {
    if (document.querySelector('#view canvas, #view .js-plotly-plot, #view svg')) requestAnimationFrame((ts) => { b.view = ts; });
    else setTimeout(look, 10);
  };
  look();
})();
"""

# Merge what arrives into s/m and test the lab's condition on each message (a function
# literal written into this script: the page's CSP forbids eval). `met` is the time of the
# first animation frame after the condition held, i.e. once it is painted.
WATCH = """
(() => {
  const b = window.__insight, c = window.shaomai.client, store = window.shaomai.store;
  // arms(k): every arm's scalar k (arm.<i>.k); solved(m): an arm's meta has solved_at.
  const arms = (k) => Object.keys(b.s).filter((x) => x.startsWith('arm.') && x.split('.').slice(2).join('.') === k).map((x) => b.s[x]);
  const solved = (m) => /"solved_at":[0-9]/.test(JSON.stringify(m || {}));
  const cond = (s, m) => { try { return !!(__COND__); } catch { return false; } };
  let held = false;
  const test = () => {
    if (held || !cond(b.s, b.m)) return;
    held = true;
    requestAnimationFrame((ts) => { b.met = ts; b.metStep = store.get('step'); });
  };
  // The client's rows are {step, values} (frontend/js/core/client.js): their values merge.
  const rows = (msg) => { for (const r of msg.rows || []) Object.assign(b.s, r.values || {}); test(); };
  c.on('scalars', rows);
  c.on('history', rows);
  c.on('frame', (f) => { if (f.infer || f.replay) return; Object.assign(b.s, f.scalars || {}); b.m = f.meta || b.m; test(); });
  c.on('status', (m) => { b.state = m.state; });
  b.state = store.get('state');
  return true;
})()
"""

READY = "window.shaomai && window.shaomai.store.get('role') === 'driver'"
DRAWN = "(window.__bench && window.__bench.first) || (window.__insight && window.__insight.view)"
# Ends the wait without the effect: the run finished or diverged first.
OVER = "['done', 'diverged', 'error'].includes(window.__insight.state)"


def catalog(base: str) -> list[dict]:
    with urllib.request.urlopen(f"{base}/api/labs", timeout=10) as r:
        return json.load(r)


def plays(lab: dict) -> bool:
    """Whether play trains on the default params (the catalog's `plays`, as in the tests)."""
    p = lab.get("plays", True)
    if isinstance(p, dict):
        props = lab["schema"]["properties"]
        return all(props[k].get("default") == v for k, v in p.items())
    return bool(lab.get("trains")) and bool(p)


def measure(browser, base: str, lab: dict, limit: float = PER_LAB_S) -> dict:
    """One lab: first frame and time to insight (seconds from navigation start)."""
    lab_id = lab["id"]
    entry = INSIGHT.get(lab_id)
    out: dict = {"lab": lab_id, "first_s": None, "insight_s": None, "note": ""}
    context, page = new_page(browser)
    page.add_init_script(VIEW_PROBE)
    try:
        page.goto(f"{base}/lab.html?lab={lab_id}&lang=en")
        wait_js(page, READY, 30)
        first = wait_js(page, DRAWN, 30)
        out["first_s"] = first / 1000
        if entry is None or not (lab.get("trains") and plays(lab)):
            return out
        page.evaluate(WATCH.replace("__COND__", entry[0]))
        page.click("[data-act=play]")
        try:
            wait_js(page, f"window.__insight.met || {OVER}", limit)
        except TimeoutError:
            out["note"] = f"not reached in {limit:.0f} s"
        met = page.evaluate("window.__insight.met")
        if met is not None:
            out["insight_s"] = met / 1000
        elif not out["note"]:
            out["note"] = f"run ended ({page.evaluate('window.__insight.state')}) first"
        out["step"] = page.evaluate("window.__insight.metStep ?? window.shaomai.store.get('step')")
        last = page.evaluate("window.__insight.s")
        out["scalars"] = {k: v for k, v in last.items() if isinstance(v, (int, float))}
        page.click("[data-act=play]")  # pause: the next lab gets the CPU
    except Exception as exc:  # noqa: BLE001 - every lab is tried; the table names each failure
        out["note"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
    finally:
        out["errors"] = list(page.console_errors)
        context.close()
    return out


SERVER_ENV = {  # one visitor opening a page per lab: a class's caps would refuse it midway
    "SHAOMAI_MAX_SESSIONS_PER_IP": "1000",
    "SHAOMAI_SESSIONS_PER_IP_PER_MIN": "10000",
}


def _median(items: list, value=lambda x: x):
    """The item whose value is the median (None counts as the slowest: not reached)."""
    ranked = sorted(items, key=lambda x: math.inf if value(x) is None else value(x))
    return ranked[(len(ranked) - 1) // 2]


def measure_all(only: list[str] | None = None, runs: int = 1) -> list[dict]:
    """Every lab (or those in `only`) `runs` times in Chromium, the median run kept (this
    machine's figures vary ±20% from one run to the next), then the server alone to the
    step where that run saw the effect, as many times, its median."""
    with Server(SERVER_ENV, name="insight") as srv, chromium() as browser:
        labs = [lab for lab in catalog(srv.url) if not only or lab["id"] in only]
        rows = []
        for lab in labs:
            tries = [measure(browser, srv.url, lab) for _ in range(runs)]
            row = _median(tries, lambda r: r["insight_s"])
            row["runs"] = [r["insight_s"] for r in tries]
            if row["insight_s"] is not None:
                speed = lab.get("play_speed", 100)
                alone = [
                    seconds_to_step(srv.ws_url, srv.url, lab["id"], row["step"], speed, PER_LAB_S)
                    for _ in range(runs)
                ]
                row["alone_s"] = _median(alone)
            logging.warning("insight %s", json.dumps(row, default=str)[:400])
            rows.append(row)
        return rows


def describe(lab_id: str) -> str:
    entry = INSIGHT.get(lab_id)
    return entry[1] if entry else "— (no training: first frame only)"


def markdown(rows: list[dict]) -> str:
    def s(v):
        return "–" if v is None else f"{v:.1f}"

    lines = [
        "| lab | first frame s | insight s | server alone s | at step | condition |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        cond = describe(r["lab"]) + (f" — {r['note']}" if r["note"] else "")
        step = r.get("step", "–") if INSIGHT.get(r["lab"]) else "–"
        cells = [f"`{r['lab']}`", s(r["first_s"]), s(r["insight_s"]), s(r.get("alone_s"))]
        cells += [str(step), cond]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(opts) -> Result:
    rows = measure_all()
    res = Result(raw={"labs": rows})
    for r in rows:
        res.figures.append(Figure(S, f"{r['lab']} first frame", r["first_s"], "s", note=r["note"]))
        if INSIGHT.get(r["lab"]) is not None:
            res.figures.append(
                Figure(
                    S,
                    f"{r['lab']} time to insight",
                    r["insight_s"],
                    "s",
                    ("≤", 10.0),
                    note=(r["note"] or f"step {r.get('step')}: {describe(r['lab'])}")[:60],
                )
            )
        if r.get("alone_s") is not None:  # what the server alone takes (bench/insight_alone.py)
            res.figures.append(Figure(S, f"{r['lab']} server alone", r["alone_s"], "s"))
    return res


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    args = sys.argv[1:]
    n = 1
    if args[:1] == ["--runs"]:
        n, args = int(args[1]), args[2:]
    found = measure_all(args or None, n)
    print(markdown(found))
    print(json.dumps(found, indent=1, default=str))
