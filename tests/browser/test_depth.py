"""The `depth` lab in a real Chromium: 30 sigmoid layers with N(0, 0.01) beside the residual
Kaiming ReLU reference (waterfall, histograms, init facts, BatchNorm table); the zero and
constant scenarios and the noise toggle; en + zh, desktop and a 390×844 phone."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
AT = "(s) => document.querySelector('#view').dataset.step === s"


def attr(page, sel: str, name: str) -> str:
    return page.get_attribute(f".depth-view {sel}", name)


def test_depth_vanishing_gradients_in_english(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=depth&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function("() => document.querySelector('#view').dataset.step !== undefined")
    facts = page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('.depth-facts tr[data-fact]')]"
        ".map((tr) => [tr.dataset.fact, tr.children[1].textContent]))"
    )
    assert facts == {
        "xavier_normal": "0.0510",
        "kaiming_fan_in": "0.0625",
        "kaiming_fan_out": "0.0884",
        "linear_default_bound": "0.0442",
    }
    assert "8/7" in page.inner_text(".depth-view")  # the BatchNorm table's batch of 8
    page.click("[data-act=step10]")
    page.wait_for_function(AT, arg="10")
    page.click("[data-act=step10]")
    page.wait_for_function(AT, arg="20")
    assert attr(page, ".depth-hist", "data-layers") == "30"
    page.wait_for_selector(".dash-waterfall canvas.wf-canvas:not([hidden])")
    names = page.evaluate(
        "() => document.querySelector('.dash-chart .chart').data.map((tr) => tr.name)"
    )
    assert names[:3] == ["plain", "residual", "reference"]
    screenshot(page, "depth-en")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(300)
    screenshot(page, "depth-en-phone")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # no sideways scroll


def test_depth_symmetry_scenarios_in_chinese(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=depth&lang=zh")
    page.wait_for_function(READY)
    page.wait_for_function("() => document.querySelector('#view').dataset.step !== undefined")
    assert "试试" in page.inner_text(".try-bar")
    page.click("[data-act=try-zeros]")
    page.wait_for_function("() => window.shaomai.store.get('params').init === 'zeros'")
    page.wait_for_function(AT, arg="0")
    page.click("[data-act=step10]")
    page.wait_for_function(AT, arg="10")
    nonzero = attr(page, ".depth-sym tr[data-nonzero]", "data-nonzero").split(",")
    assert nonzero[:2] == ["0", "0"]  # plain and residual: every weight still exactly 0
    page.click("[data-act=try-const]")
    page.wait_for_function("() => window.shaomai.store.get('params').init === 'constant'")
    page.wait_for_function(AT, arg="0")
    page.click("[data-act=step10]")
    page.wait_for_function(AT, arg="10")
    spread = attr(page, ".depth-sym tr[data-spread]", "data-spread").split(",")
    assert spread[:2] == ["0", "0"]
    assert "各行完全相同" in page.inner_text(".depth-sym")
    screenshot(page, "depth-zh-constant")
    page.click("[data-act=noise]")
    page.wait_for_function("() => window.shaomai.store.get('params').noise === true")
    page.wait_for_function(AT, arg="0")
    page.click("[data-act=step10]")
    page.wait_for_function(AT, arg="10")
    spread = attr(page, ".depth-sym tr[data-spread]", "data-spread").split(",")
    assert all(float(s) > 0 for s in spread[:2]), spread
    screenshot(page, "depth-zh")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(300)
    screenshot(page, "depth-zh-phone")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # no sideways scroll
