"""The `conv` lab in a real Chromium: the edge example's numbers, the flipped kernel, a preset
and a painted edge recompute live, pooling and the size formula against torch, the examples
clicked through; en desktop and zh on a 390×844 phone, screenshots of each."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"


def grid(page, sel: str) -> list[str]:
    return page.eval_on_selector_all(f"{sel} > div", "cs => cs.map(c => c.textContent)")


def rows(values: list[str], n: int) -> list[list[str]]:
    return [values[i : i + n] for i in range(0, len(values), n)]


def stage(page, n: int) -> None:
    page.wait_for_function(f"() => document.querySelector('.conv-view').dataset.stage === '{n}'")


def test_examples_in_english_with_a_painted_edge(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=conv&lang=en")
    page.wait_for_function(READY)
    stage(page, "correlate")
    assert rows(grid(page, ".conv-output"), 4) == [["0", "1", "0", "0"]] * 4
    assert "cross-correlation" in page.inner_text(".conv-text")
    page.wait_for_function(
        "() => document.querySelector('.conv-line').textContent.includes('out[')"
    )
    screenshot(page, "conv-en-edge")

    page.click("[data-act=step]")
    stage(page, "flip")
    assert rows(grid(page, ".conv-convolved"), 4) == [["0", "−1", "0", "0"]] * 4

    # Back to the first example; a blank 10×10, paint a vertical bar, the Sobel preset.
    page.click(".conv-ribbon button[data-stage=correlate]")
    stage(page, "correlate")
    page.click("text=Blank 10×10")
    page.wait_for_function("() => document.querySelectorAll('.conv-image > div').length === 100")
    first = page.locator(".conv-image > div[data-i='0'][data-j='6']").bounding_box()
    last = page.locator(".conv-image > div[data-i='9'][data-j='6']").bounding_box()
    page.mouse.move(first["x"] + 5, first["y"] + 5)
    page.mouse.down()
    page.mouse.move(last["x"] + 5, last["y"] + 5, steps=12)
    page.mouse.up()
    page.click("[data-preset=edge]")
    # 10×10 ⋆ 3×3 Sobel = 8×8; the bar at column 6 gives +4 left of it, −4 right of it.
    page.wait_for_function("() => document.querySelectorAll('.conv-output > div').length === 64")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.conv-output > div')].slice(0, 8)"
        ".map(c => c.textContent).join(' ') === '0 0 0 0 4 0 −4 0'"
    )
    screenshot(page, "conv-en-painted")

    page.click(".conv-ribbon button[data-stage=max_pool]")
    stage(page, "max_pool")
    assert rows(grid(page, ".conv-pool-out"), 2) == [["7", "6"], ["8", "9"]]
    page.click("[data-act=step]")  # to out_size
    stage(page, "out_size")
    assert "⌊(5 + 2·0 − 3) / 1⌋ + 1 = 3" in page.inner_text(".conv-formula")
    assert "returns 3 × 3" in page.inner_text(".conv-size")
    page.fill("input[data-knob=p]", "1")
    page.dispatch_event("input[data-knob=p]", "change")
    page.wait_for_function(
        "() => document.querySelector('.conv-formula').textContent.endsWith('= 5')"
    )
    page.click("[data-act=step]")
    stage(page, "receptive")
    assert "18 weights" in page.inner_text(".conv-card") and "25" in page.inner_text(".conv-card")
    page.click("[data-act=step]")
    stage(page, "one_by_one")
    assert "largest |conv − linear|" in page.inner_text(".conv-card")
    screenshot(page, "conv-en-1x1")


def test_chinese_on_a_phone(live_server, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    try:
        page.goto(f"{live_server}/lab.html?lab=conv&lang=zh")
        page.wait_for_function(READY)
        stage(page, "correlate")
        assert "互相关" in page.inner_text(".conv-text")
        assert rows(grid(page, ".conv-output"), 4) == [["0", "1", "0", "0"]] * 4
        screenshot(page, "conv-zh-phone")
        page.click(".conv-ribbon button[data-stage=avg_pool]")
        stage(page, "avg_pool")
        assert rows(grid(page, ".conv-pool-out"), 2) == [["3.5", "5.5"], ["11.5", "13.5"]]
        screenshot(page, "conv-zh-phone-pool")
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 392, width  # nothing pushes the phone sideways
    finally:
        context.close()
    assert not errors, errors
