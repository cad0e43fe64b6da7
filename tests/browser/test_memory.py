"""The `memory` lab in a real Chromium: press play and the LSTM and GRU learn to recall the
first symbol across the delay while the plain RNN stays at chance; the gates over time and
the holding unit's forget gate on the example; the sweep fills in delay by delay; en + zh,
desktop and a 390×844 phone without sideways scroll."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
HAS_STEP = "() => document.querySelector('#view').dataset.step !== undefined"
STEP_AT_LEAST = "(s) => Number(document.querySelector('#view').dataset.step) >= s"


def hold(page, arm: str) -> str:
    return page.inner_text(f".memory-hold[data-arm={arm}]")


def phone(page, name: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(400)
    screenshot(page, name)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # no sideways scroll
    page.set_viewport_size({"width": 1280, "height": 900})


@pytest.mark.slow  # trains three arms for 200 steps
def test_memory_in_english(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=memory&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function(HAS_STEP)
    tokens = page.locator(".memory-strip .memory-tok")
    assert tokens.count() == 32  # the default delay 30, the symbol and the cue
    assert page.inner_text(".memory-strip .memory-tok.cue") == "?"
    page.click("[data-act=play]")
    page.wait_for_function(STEP_AT_LEAST, arg=200, timeout=150_000)
    page.click("[data-act=play]")  # pause
    page.wait_for_timeout(500)
    lstm = hold(page, "LSTM")
    assert lstm.startswith("LSTM, unit") and "forget gate stays at or above 0.9" in lstm, lstm
    assert "no gate" in hold(page, "RNN")
    held = page.evaluate(
        "() => document.querySelectorAll('.dash-chart .chart')[1].data.map((tr) => [tr.name, tr.y[tr.y.length - 1]])"
    )
    acc = dict(held[:3])
    assert acc["LSTM"] > 0.9 and acc["GRU"] > 0.5 and acc["RNN"] < 0.4, acc
    assert page.locator(".memory-answer[data-arm=LSTM].ok").count() == 1
    assert page.locator(".memory-view .mg-main").count() == 3  # LSTM gates, GRU gates, states
    screenshot(page, "memory-en")
    phone(page, "memory-en-phone")


def test_memory_sweep_in_chinese(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=memory&lang=zh")
    page.wait_for_function(READY)
    # Written with the view, not at its first frame (a loaded machine saw "{steps}" here).
    sweep = page.inner_text(".memory-sweep")
    assert "把模式选为" in sweep and "{steps}" not in sweep, sweep
    page.wait_for_function(HAS_STEP)
    assert "随机猜测" in page.inner_text(".memory-view")
    assert "把模式选为" in page.inner_text(".memory-sweep")
    page.select_option("#param-mode", "sweep")
    page.wait_for_function("() => window.shaomai.store.get('params').mode === 'sweep'")
    page.fill("#param-sweep_steps", "50")
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.shaomai.store.get('params').sweep_steps === 50")
    page.wait_for_function(HAS_STEP)
    page.click("[data-act=play]")
    page.wait_for_function(STEP_AT_LEAST, arg=101, timeout=120_000)
    page.click("[data-act=play]")
    page.wait_for_function(  # two delays done: two points per arm, the rest still empty
        "() => { const d = document.querySelector('.memory-sweep .chart').data;"
        " return d && d.slice(0, 3).every((tr) => tr.y.filter((v) => v !== null).length >= 2); }",
        timeout=10_000,
    )
    first = page.evaluate("() => document.querySelector('.memory-sweep .chart').data[0].y[0]")
    assert first > 0.5  # delay 2, 50 steps: the plain RNN is already well above chance (0.25)
    assert "正在延迟" in page.inner_text(".memory-sweep")
    assert "留出集" in page.inner_text(".memory-view")
    screenshot(page, "memory-zh-sweep")
    phone(page, "memory-zh-phone")
