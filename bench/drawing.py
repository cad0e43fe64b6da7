"""Scenario 7 (drawing): frames the `gpt` view draws per second in headless Chromium while
the session plays, from `requestAnimationFrame` timestamps in the page.

A frame counts as drawn when the step the shell shows changes between two animation
frames. The session plays the default run (made long enough not to end). Beside it: the
frames that arrived (the server sends at most SHAOMAI_FRAME_FPS, 30, and no more than the
session steps), the time of the view's `frame()` call, and the page's animation frame
rate with its p95 interval (jank: a long task shows up as a long interval).
"""

from __future__ import annotations

from bench.browser import chromium, new_page, wait_js
from bench.report import Figure, Result, percentiles
from bench.server import Server

S = "drawing"
# Count the frames that arrive, and time each call of the view's `frame` (its draw).
COUNT_ARRIVALS = """
(() => {
  const b = window.__bench;
  b.arrived = 0;
  b.cost = [];
  window.shaomai.client.on('frame', (f) => { if (b.recording && !f.infer) b.arrived++; });
  const view = window.shaomai.view, draw = view.frame.bind(view);
  view.frame = (f) => {
    const t0 = performance.now();
    draw(f);
    if (b.recording) b.cost.push(performance.now() - t0);
  };
  return true;
})()
"""


def run(opts) -> Result:
    seconds = 4.0 if opts.quick else 8.0
    with Server(name="drawing") as srv, chromium() as browser:
        context, page = new_page(browser)
        try:
            page.goto(srv.url + "/lab.html?lab=gpt&lang=en")
            wait_js(page, "window.__bench && window.__bench.first && window.shaomai")
            wait_js(page, "document.querySelector('#controls button:not([disabled])')")
            page.evaluate(COUNT_ARRIVALS)
            page.evaluate("window.shaomai.client.send({type: 'set', params: {steps: 20000}})")
            page.evaluate("window.shaomai.client.control('play')")
            page.wait_for_timeout(1500)  # playing, the curves growing
            page.evaluate("window.__bench.record(true)")
            page.wait_for_timeout(seconds * 1000)
            page.evaluate("window.__bench.record(false)")
            data = page.evaluate(
                "({raf: window.__bench.raf, shown: window.__bench.shown,"
                " arrived: window.__bench.arrived, cost: window.__bench.cost})"
            )
            page.evaluate("window.shaomai.client.control('pause')")
            errors = list(page.console_errors)
        finally:
            context.close()
    raf, shown = data["raf"], data["shown"]
    span = (raf[-1] - raf[0]) / 1000 if len(raf) > 1 else float("nan")
    drawn = len(shown) / span
    steps = (int(shown[-1][1]) - int(shown[0][1])) / span if len(shown) > 1 else float("nan")
    gaps = [b - a for a, b in zip(raf, raf[1:], strict=False)]
    p = percentiles(gaps)
    arrived = data["arrived"] / span
    cost = percentiles(data["cost"])
    res = Result(
        raw={
            "seconds": span,
            "drawn": len(shown),
            "arrived": data["arrived"],
            "raf_ms": gaps,
            "draw_ms": data["cost"],
            "errors": errors,
        }
    )
    res.figures += [
        Figure(
            S,
            "gpt frames drawn per second",
            drawn,
            "fps",
            ("≥", 20.0),
            baseline=f"{arrived:.1f} fps arrived",
            note=f"over {span:.1f} s of play at {steps:.0f} steps/s",
        ),
        Figure(
            S,
            "drawn / arrived",
            drawn / arrived if arrived else None,
            "",
            note="1.0: every frame that came was drawn",
        ),
        Figure(
            S,
            "view.frame() time p95",
            cost["p95"],
            "ms",
            note=f"p50 {cost['p50']:.1f} ms: room for {1000 / max(cost['p95'], 1e-3):.0f} fps",
        ),
        Figure(
            S,
            "animation frames per second",
            len(raf) / span,
            "fps",
            note=f"interval p95 {p['p95']:.0f} ms, p99 {p['p99']:.0f} ms",
        ),
    ]
    if errors:
        res.figures.append(
            Figure(S, "console errors", float(len(errors)), "", ("≤", 0.0), note=errors[0][:60])
        )
    return res
