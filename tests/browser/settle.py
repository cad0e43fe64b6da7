"""Wait for a page to settle before a test measures its layout.

A box measured while the page is still moving reads a layout nobody sees: a web font that
loads late reflows the text, a view sizes its canvases in a requestAnimationFrame after a
frame arrives, a ResizeObserver adjusts a panel one frame later. Under load these come late,
so a measurement that passes alone fails beside other jobs. `settle(pg)` waits until the
fonts are loaded, the document has finished loading, the view has drawn a step (where it
says which: `#view[data-step]`, or the one asked for) and the boxes of the measured elements
(and the page's scroll size) stay the same over consecutive animation frames.
"""

from __future__ import annotations

# Each animation frame: fonts and document ready, the step drawn, and the layout signature
# (boxes of the selectors, the viewport, the scroll size) unchanged for `frames` frames and
# `quiet_ms` milliseconds.
_SETTLED = """([selectors, step, frames, quietMs]) => {
  if (document.readyState !== 'complete' || document.fonts.status !== 'loaded') return false;
  const view = document.querySelector('#view');
  if (step !== null && !(view && (step === '*' ? view.dataset.step !== undefined
                                                : view.dataset.step === step))) return false;
  const box = (e) => { const r = e.getBoundingClientRect();
    return [r.left, r.top, r.width, r.height].map((v) => Math.round(v * 10) / 10); };
  const sig = JSON.stringify([innerWidth, innerHeight, document.documentElement.scrollWidth,
    document.documentElement.scrollHeight,
    selectors.map((s) => [...document.querySelectorAll(s)].map(box))]);
  const now = performance.now();
  const st = window.__settle || (window.__settle = {sig: null, same: 0, since: now});
  if (sig !== st.sig) Object.assign(st, {sig, same: 0, since: now});
  else st.same += 1;
  // frames and a quiet spell both: a debounced resize handler redraws after a pause
  return st.same >= frames && now - st.since >= quietMs;
}"""


def settle(
    pg,
    *selectors: str,
    step: int | str | None = None,
    frames: int = 2,
    quiet_ms: float = 300,
    timeout: float = 60_000,
) -> None:
    """Return once `pg` has settled (see the module's docstring).

    `selectors`: the elements about to be measured (default: `#view` and the body);
    `step`: wait for the view to show this step (`#view[data-step]`), or "*": any step;
    `frames`, `quiet_ms`: how many consecutive animation frames, and how long, the boxes must
    stay the same (a wait, not a timing assertion)."""
    pg.evaluate("() => document.fonts.ready.then(() => true)")
    pg.evaluate("() => { window.__settle = null; }")
    pg.wait_for_function(
        _SETTLED,
        arg=[
            list(selectors) or ["#view", "body"],
            None if step is None else str(step),
            frames,
            quiet_ms,
        ],
        polling="raf",
        timeout=timeout,
    )
