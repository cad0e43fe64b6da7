"""Chapter 1 in a real Chromium: the apple's buttons and training, live-stream's divergence,
the temperature lab's split switch."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"


def chart_data(page, selector: str):
    return page.evaluate(f"() => document.querySelector({selector!r}).data")


def test_apple_buttons_accumulate_then_training_converges(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=apple&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function("() => document.querySelector('.apple-view .chart').data.length >= 4")
    curve = chart_data(page, ".apple-view .chart")
    assert curve[0]["name"] == "L(x)" and len(curve[0]["x"]) == 121
    now = [tr for tr in curve if tr["name"] == "x now"][0]
    assert (now["x"][0], now["y"][0]) == (1, 9)
    tangent = [tr for tr in curve if tr["name"] == "tangent"][0]
    slope = (tangent["y"][1] - tangent["y"][0]) / (tangent["x"][1] - tangent["x"][0])
    assert slope == pytest.approx(-18)  # autograd's dL/dx at x = 1

    # forward, backward twice without zero_grad: x.grad piles up, -18 then -36.
    for _ in range(2):
        page.click("button[data-action=forward]")
        page.wait_for_selector("button[data-action=backward]:not([disabled])")
        page.click("button[data-action=backward]")
        page.wait_for_selector("button[data-action=backward][disabled]")
    page.wait_for_function("() => document.querySelectorAll('.apple-log tr').length === 5")
    grads = page.eval_on_selector_all(
        ".apple-log tr td:last-child", "tds => tds.map(t => t.textContent)"
    )
    assert grads == ["None", "-18", "-18", "-36"]
    page.click("button[data-action=zero_grad]")
    page.wait_for_function("() => document.querySelectorAll('.apple-log tr').length === 6")
    screenshot(page, "apple-buttons")

    page.click("[data-act=play]")
    page.wait_for_function("() => window.shaomai.store.get('state') === 'done'")
    losses = chart_data(page, ".apple-view .panel:nth-child(3) .chart")
    assert len(losses[0]["x"]) > 20  # the loss curve was drawn (zeros are off a log axis)
    assert losses[0]["y"][:2] == [9, 2.25]  # step 0 at x = 1, step 1 at x = 1.5
    curve = chart_data(page, ".apple-view .chart")
    now = [tr for tr in curve if tr["name"] == "x now"][0]
    assert now["x"][0] == pytest.approx(2, abs=1e-4)  # the picture moved to the optimum
    assert "converges" in page.inner_text(".readout")
    screenshot(page, "apple-trained")


def test_live_stream_raw_diverges_and_reset_recovers(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=live-stream&lang=en")
    page.wait_for_function(READY)
    page.select_option("#param-features", "raw")
    page.wait_for_function("() => location.search.includes('features=raw')")
    # The lr slider is log-scaled: position -9 is 1e-9.
    page.eval_on_selector(
        "#param-lr", "e => { e.value = '-9'; e.dispatchEvent(new Event('change')); }"
    )
    page.wait_for_function("() => window.shaomai.store.get('params').lr === 1e-9")
    page.wait_for_function("() => document.querySelector('.live-stream-extra .readout')")
    assert "9.33e-11" in page.inner_text(".live-stream-extra .readout")  # 2/λmax
    page.click("[data-act=play]")
    page.wait_for_function("() => window.shaomai.store.get('state') === 'diverged'")
    assert "Diverged" in page.inner_text("#banner")
    assert window_step(page) == 12
    why = chart_data(page, ".live-stream-extra .panel:nth-child(3) .chart")
    assert [tr["type"] for tr in why] == ["bar", "bar", "scatter"]
    screenshot(page, "live-stream-diverged")

    page.click("[data-act=reset]")
    page.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
    page.wait_for_function("() => document.querySelector('#banner').hidden")
    assert window_step(page) == 0
    page.click("[data-act=step]")
    page.wait_for_function("() => window.shaomai.store.get('step') === 1")
    assert "∞" not in page.inner_text(".live-stream-extra .readout")
    screenshot(page, "live-stream-reset")


def window_step(page) -> int:
    return page.evaluate("() => window.shaomai.store.get('step')")


def test_temperature_shuffled_split_in_chinese(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=temperature&lang=zh&split=shuffled")
    page.wait_for_function(READY)
    page.click("[data-act=step10]")
    page.wait_for_function("() => window.shaomai.store.get('step') >= 10")
    page.wait_for_function(
        "() => document.querySelector('.temperature-view .panel:nth-child(5) .chart').data.length === 4"
    )
    assert "随机打乱" in page.inner_text(".temperature-note")
    # The loss curves are redrawn within the page's budget for costly redraws: a moment later.
    page.wait_for_function(
        "() => document.querySelector('.temperature-view .chart').data.every((tr) => tr.x.length >= 11)"
    )
    losses = chart_data(page, ".temperature-view .chart")
    assert [len(tr["x"]) for tr in losses] == [11, 11, 11, 11]
    valley = chart_data(page, ".temperature-view .panel:nth-child(3) .chart")
    ratio = chart_data(page, ".temperature-view .panel:nth-child(4) .chart")
    assert len(valley[0]["z"]) == 48 and len(ratio[0]["z"]) == 48
    c_now, a_now = valley[3]["x"][0], valley[3]["y"][0]  # the current (C, A)
    a_ratio = ratio[3]["x"][0]  # the current A/C
    assert c_now == pytest.approx(2, abs=0.1) and a_now / c_now == pytest.approx(a_ratio)
    screenshot(page, "temperature-shuffled-zh")
