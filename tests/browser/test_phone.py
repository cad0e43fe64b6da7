"""A student's phone (390×844, touch): scrubbing never widens the page, the picture comes
first with play/step and the timeline in a sticky bar, the params folded away, every touch
target at least 44 px, no zh label broken one character a line, no Shift-click hint."""

import pytest

from tests.browser.settle import settle
from tests.conftest import screenshot

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
DRIVER = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
WIDTH = "() => document.documentElement.scrollWidth"
# Every visible control a thumb uses, and its rendered size.
TARGETS = """() => [...document.querySelectorAll(
    'button, select, input[type=range], input[type=checkbox], summary')]
  .filter((e) => e.offsetParent !== null && !e.closest('.modebar'))
  .map((e) => { const r = e.getBoundingClientRect();
    return [e.dataset.act || e.id || e.type || e.tagName, Math.round(r.width), Math.round(r.height)]; })"""
# Text that wraps to one glyph a line: a box much taller than wide with more than one glyph.
SLIVERS = """() => [...document.querySelectorAll('button, label, dt, dd, h3, .state, output, span')]
  .filter((e) => e.offsetParent !== null && e.children.length === 0 && e.textContent.trim().length > 2)
  .filter((e) => { const r = e.getBoundingClientRect(); const lh = parseFloat(getComputedStyle(e).fontSize) * 1.2;
    return r.height > 3 * lh && r.width < 2.5 * lh; })
  .map((e) => e.textContent.trim())"""


@pytest.mark.parametrize(("lab", "lang"), [("gpt", "en"), ("linear-regression", "zh")])
def test_phone_layout_scrub_and_touch_targets(live_server, browser, lab, lang):
    ctx = browser.new_context(**PHONE, locale="zh-CN" if lang == "zh" else "en-US")
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{live_server}/lab.html?lab={lab}&lang={lang}")
        page.wait_for_function(DRIVER)
        page.click("[data-act=step10]")
        page.wait_for_function("() => window.shaomai.store.get('step') >= 10")
        # Scrub back: the timeline's text grows ("Viewing step 3 (live: 10)"), the page not.
        page.evaluate(
            "() => { const r = document.querySelector('#scrubber input'); r.value = 3; r.oninput(); }"
        )
        page.wait_for_function("() => document.querySelector('#scrubber .live:not([hidden])')")
        settle(page, "#view", "#side", ".dock")
        assert page.evaluate(WIDTH) <= 390
        # The picture first, the bar of play/step/timeline stuck to the bottom of the screen.
        view = page.locator("#view").bounding_box()
        side = page.locator("#side").bounding_box()
        assert view["y"] < side["y"]
        assert page.evaluate("() => !document.querySelector('#params-box').open")
        dock = page.locator(".dock").bounding_box()
        assert dock["y"] + dock["height"] <= 844 + 1
        assert dock["height"] < 844 / 3
        assert page.is_visible(".dock [data-act=play]") and page.is_visible(".dock #scrubber input")
        screenshot(page, f"phone-{lab}-{lang}")
        # Open the params: every target (sliders and switches too) is thumb-sized.
        page.click("#params-box summary")
        settle(page, "#params-box")
        small = [t for t in page.evaluate(TARGETS) if t[1] < 44 or t[2] < 44]
        assert not small, small
        assert page.evaluate(WIDTH) <= 390
        assert page.evaluate(SLIVERS) == []
        # Plotly's mode bar would sit over the legends where a tap shows it.
        assert page.evaluate(
            "() => [...document.querySelectorAll('.modebar-container')].every(e => e.offsetParent === null)"
        )
        text = page.inner_text("body")
        assert "shift" not in text.lower() and "Shift" not in text
        screenshot(page, f"phone-{lab}-{lang}-params")
        assert not errors
    finally:
        ctx.close()
