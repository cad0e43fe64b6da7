"""The page subscribes with `scalars: "either"`: a step with a frame comes once, in the
frame. Its charts still get every step exactly once, in order, whether the step came as a
row or in its frame (backend test: tests/backend/test_scalars_either.py)."""

import pytest

pytestmark = pytest.mark.browser

COLLECT = """() => {
  window.__steps = [];
  window.shaomai.client.on('scalars', (m) => { for (const r of m.rows) window.__steps.push(r.step); });
  window.shaomai.client.on('history', (m) => { for (const r of m.rows) window.__steps.push(r.step); });
}"""


def test_the_page_gets_every_step_once_from_rows_and_frames(live_server, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        pg.goto(f"{live_server}/lab.html?lab=gpt&lang=en")
        pg.wait_for_function(
            "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
        )
        pg.wait_for_function("() => window.shaomai.client.subscription?.scalars === 'either'")
        pg.evaluate(COLLECT)
        for n in (1, 2, 3):  # pressed steps: each ends with its picture (its row in it)
            pg.click("[data-act=step]")
            pg.wait_for_function(f"() => window.shaomai.store.get('shownStep') === {n}")
        pg.click("[data-act=step10]")  # flat out: some steps without a frame
        pg.wait_for_function("() => window.shaomai.store.get('shownStep') === 13")
        pg.wait_for_function("() => window.__steps.includes(13)")
        steps = pg.evaluate("() => window.__steps")
        assert steps == list(range(1, 14)), steps  # each step once, in order
        frames = pg.evaluate("() => window.shaomai.client.received.frames")
        assert frames >= 4
        assert not errors, errors
    finally:
        context.close()
