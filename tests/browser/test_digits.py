"""The digits lab in a real Chromium: it trains, the templates change, a drawn digit gets its softmax."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

TEST_POINTS = "() => document.querySelector('.digits-acc .chart').data[1].x.length"
TEMPLATES = "() => document.querySelector('.digits-templates canvas').toDataURL()"
DRAWN_PROBS = "() => document.querySelector('.digits-draw .drawn-probs').data[0].y"


def draw_stroke(page, points):
    box = page.locator(".digits-draw canvas.draw-pad").bounding_box()
    x0, y0 = box["x"], box["y"]
    page.mouse.move(x0 + points[0][0], y0 + points[0][1])
    page.mouse.down()
    for x, y in points[1:]:
        page.mouse.move(x0 + x, y0 + y, steps=6)
    page.mouse.up()


def test_digits_trains_changes_templates_and_reads_a_drawing(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=digits&lang=en")
    page.wait_for_function("() => window.shaomai && window.shaomai.store.get('role') === 'driver'")
    assert page.inner_text("#lab-title") == "Handwritten digits with an MLP"
    page.wait_for_function(f"() => ({TEST_POINTS})() === 1")  # step 0's accuracy
    before = page.evaluate(TEMPLATES)
    assert "535,818 = 535,040 weights + 778 biases" in page.inner_text(".digits-view")
    assert "cannot be reproduced here" in page.inner_text(".digits-view")

    page.click("[data-act=play]")
    page.wait_for_function(f"() => ({TEST_POINTS})() > 10")  # 100+ steps, every 10 measured
    page.click("[data-act=play]")  # pause
    page.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
    assert page.evaluate(TEMPLATES) != before  # the first layer's weights moved
    acc = page.evaluate("() => document.querySelector('.digits-acc .chart').data[1].y.at(-1)")
    assert acc > 0.5
    confusion = page.evaluate("() => document.querySelector('.digits-confusion .chart').data[0].z")
    assert len(confusion) == 10 and sum(map(sum, confusion)) == 359

    # Draw a "1" with the mouse: the server answers with the softmax of the drawing.
    assert sum(page.evaluate(DRAWN_PROBS)) == 0
    draw_stroke(page, [(128, 30), (128, 90), (127, 160), (126, 225)])
    page.wait_for_function(
        f"() => Math.abs(({DRAWN_PROBS})().reduce((a, b) => a + b, 0) - 1) < 1e-3"
    )
    pred = page.inner_text(".digits-draw .pred")
    assert pred[0] in "0123456789"
    assert page.evaluate(
        "() => { const c = document.querySelectorAll('.digits-draw canvas.template-grid')[1];"
        " return c.width > 1; }"
    )
    screenshot(page, "digits-en")

    page.click(".digits-draw .tools button")  # clear
    page.wait_for_function(f"() => ({DRAWN_PROBS})().every((v) => v === 0)")

    page.click("#lang-btn")
    page.wait_for_function(
        "() => document.querySelector('#lab-title').textContent.includes('手写数字')"
    )
    assert "写一个数字" in page.inner_text(".digits-draw")
    screenshot(page, "digits-zh")
