"""The `cnn` lab in a real Chromium: a new user presses play and the CNN passes 95% test
accuracy (steps bounded; the wall time is written down), feature maps, kernels, confusion
matrices for both arms with their parameter counts, a drawn digit gets both softmaxes and its
own feature maps; en desktop and zh on a 390×844 phone (augmentation on, the 7×7 stride-2
stem as a third arm), screenshots of each."""

import logging
import time

import pytest

from tests.conftest import ARTIFACTS, screenshot

pytestmark = pytest.mark.browser
log = logging.getLogger(__name__)

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
ACC = "() => document.querySelector('.cnn-acc .chart').data"
CNN_TEST = f"() => ({ACC})()[0].y"  # arm 0 (CNN), first key (test accuracy)
MAPS = "() => [...document.querySelectorAll('.cnn-sample .cnn-map canvas.mg-main')].map(c => c.toDataURL())"


def draw_stroke(page, points):
    pad = page.locator(".cnn-draw canvas.draw-pad")
    pad.scroll_into_view_if_needed()
    box = pad.bounding_box()
    page.mouse.move(box["x"] + points[0][0], box["y"] + points[0][1])
    page.mouse.down()
    for x, y in points[1:]:
        page.mouse.move(box["x"] + x, box["y"] + y, steps=6)
    page.mouse.up()


def test_play_past_95_percent_then_draw(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=cnn&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function(f"() => ({CNN_TEST})().length === 1")  # step 0's accuracy
    readout = page.inner_text(".dash-readout")
    assert "CNN parameters" in readout and "1,898" in readout and "1,885" in readout
    assert "1438 train / 359 test" in readout
    assert page.locator(".cnn-sample .cnn-map canvas.mg-main").count() == 2  # conv 1 and conv 2
    assert page.locator(".cnn-kernels .cnn-map canvas.mg-main").count() == 2
    assert page.locator(".cnn-confusion .matrix-view").count() == 2
    before = page.evaluate(MAPS)

    start = time.monotonic()
    page.click("[data-act=play]")
    page.wait_for_function(f"() => Math.max(...({CNN_TEST})()) > 0.95", timeout=120_000)
    seconds = time.monotonic() - start
    page.click("[data-act=play]")  # pause
    page.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
    step = page.evaluate("() => window.shaomai.store.get('step')")
    log.warning("cnn: over 95%% test accuracy after %.1f s of play (step %d)", seconds, step)
    assert step <= 400, step  # the default recipe: ~100 steps on seed 0
    assert page.evaluate(MAPS) != before  # the feature maps changed as the kernels learned
    conf = page.eval_on_selector_all(
        ".cnn-confusion .matrix-view:first-of-type td", "cs => cs.map(c => Number(c.textContent))"
    )
    assert len(conf) == 100 and sum(conf) == 359  # the whole test split
    assert "gap" in page.inner_text(".dash-readout")
    assert "95.05%" in page.inner_text(".cnn-gap")

    draw_stroke(page, [(112, 25), (112, 90), (111, 150), (110, 200)])  # a "1"
    page.wait_for_function(
        "() => document.querySelectorAll('.cnn-draw .cnn-probs .prob-bars li:not([hidden])')"
        ".length === 20"
    )
    page.wait_for_function(
        "() => document.querySelectorAll('.cnn-draw .cnn-map canvas.mg-main').length === 2"
    )
    says = page.inner_text(".cnn-draw .cnn-probs")
    assert "CNN (8→16 channels) says" in says and "MLP (64→25→10) says" in says
    screenshot(page, "cnn-en")


def test_chinese_on_a_phone(live_server, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    try:
        page.goto(f"{live_server}/lab.html?lab=cnn&lang=zh&augment=true&compare_stem=true")
        page.wait_for_function(READY)
        page.click("[data-act=step10]")
        page.wait_for_function("() => window.shaomai.store.get('step') >= 10")
        page.wait_for_function(f"() => ({CNN_TEST})().length >= 2")
        assert "写一个数字" in page.inner_text(".cnn-draw")
        assert "整个测试集上的混淆矩阵" in page.inner_text(".cnn-confusion")
        assert page.locator(".cnn-confusion .matrix-view").count() == 3  # the stem arm too
        assert "CNN 7×7/2 参数量" in page.inner_text(".dash-readout")
        draw_stroke(page, [(60, 60), (150, 60), (100, 200)])  # a "7"
        page.wait_for_function(
            "() => document.querySelectorAll('.cnn-draw .cnn-map canvas.mg-main').length === 2"
        )
        assert "认为是" in page.inner_text(".cnn-draw")
        screenshot(page, "cnn-zh-phone")
        for name in ("cnn-draw", "cnn-confusion"):  # what a phone shows, one screen at a time
            page.locator(f".{name}").scroll_into_view_if_needed()
            page.screenshot(path=str(ARTIFACTS / f"{name}-zh-phone-screen.png"))
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 392, width
    finally:
        context.close()
    assert not errors, errors
