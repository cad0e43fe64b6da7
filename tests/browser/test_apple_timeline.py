"""The apple lab in a real Chromium: a pressed `step` is a step of the run's timeline, so
the charts plot it and the scrubber goes back to it (a replay, not a new press in the log)."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
LOG_ROWS = "() => [...document.querySelectorAll('.apple-log tr')].map(r => r.textContent)"
X_NOW = "() => document.querySelector('.apple-view .chart').data.find(t => t.name === 'x now').x[0]"


def test_a_pressed_step_is_plotted_and_scrubbed_back_to(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=apple&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function("() => document.querySelector('.apple-view .chart').data.length >= 4")
    page.click("button[data-action=forward]")
    page.wait_for_selector("button[data-action=backward]:not([disabled])")
    page.click("button[data-action=backward]")
    page.wait_for_selector("button[data-action=backward][disabled]")
    page.click("button[data-action=step]")  # x = 1 - (1/36)(-18) = 1.5, recorded as step 1
    page.wait_for_function("() => window.shaomai.store.get('step') === 1")
    page.click("[data-act=step]")  # a played step after it: step 2
    page.wait_for_function("() => window.shaomai.store.get('step') === 2")
    page.wait_for_function(  # charts redraw within a budget, after the step shows
        "() => document.querySelector('.apple-view .panel:nth-child(4) .chart').data[0].y.length >= 2"
    )
    xs = page.evaluate(
        "() => document.querySelector('.apple-view .panel:nth-child(4) .chart').data[0].y"
    )
    assert xs[:2] == [1, 1.5]  # the press is a point of the x chart
    log = page.evaluate(LOG_ROWS)
    page.eval_on_selector(
        ".scrubber input", "e => { e.value = 1; e.dispatchEvent(new Event('input')); }"
    )
    page.wait_for_function(f"() => ({X_NOW})() === 1.5")
    screenshot(page, "apple-pressed-step-scrubbed")
    assert page.evaluate(LOG_ROWS) == log  # the replayed press is drawn, not logged again
