"""Headless Chromium for the page scenarios (the same binary and flags as the browser tests)."""

from __future__ import annotations

import time
from contextlib import contextmanager

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Installed before the page's own scripts: the time (performance.now(), from navigation
# start) of the first frame the shell draws (#frame-step changes), taken at the next
# animation frame, i.e. once it is painted; and, while `record(true)`, every animation
# frame's timestamp with the step shown then. Event-driven otherwise: an animation-frame
# loop of its own keeps the page rendering a frame at every display refresh (`norms`
# playing: 439 frames in 8 s with the loops, 246 without), on the cores the lab trains on.
PROBE = """
(() => {
  const b = window.__bench = { first: null, raf: [], shown: [], recording: false, errors: [] };
  let last = null, looking = false;
  const look = (ts) => {
    looking = false;
    const el = document.getElementById('frame-step');
    const s = el ? el.textContent : '';
    if (/^[0-9]+$/.test(s) && s !== last) {
      if (b.first === null) b.first = ts;
      if (b.recording) b.shown.push([ts, s]);
      last = s;
    }
    if (b.recording) { b.raf.push(ts); lookNext(); }
  };
  const lookNext = () => { if (!looking) { looking = true; requestAnimationFrame(look); } };
  b.record = (on) => { b.recording = on; if (on) lookNext(); };
  const watch = () => { // #frame-step exists once the shell has built the page
    const el = document.getElementById('frame-step');
    if (!el) { setTimeout(watch, 10); return; }
    new MutationObserver(lookNext).observe(el, { childList: true, characterData: true, subtree: true });
    lookNext();
  };
  watch();
  window.addEventListener('error', (e) => b.errors.push(String(e.message)));
})();
"""


def wait_js(page, expr: str, timeout: float = 60.0):
    """Poll a JS expression until it is truthy (wait_for_function would need eval, which the
    app's CSP forbids); returns its value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = page.evaluate(expr)
        if value:
            return value
        page.wait_for_timeout(20)
    raise TimeoutError(f"{expr} stayed false for {timeout} s")


@contextmanager
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    page.add_init_script(PROBE)
    page.console_errors = errors
    return context, page
