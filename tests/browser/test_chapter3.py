"""Chapter 3 in a real Chromium: the playground trains and redraws, the ReLU kink prints its
program, the activation readouts show the exact values at 0."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
LOSS_POINTS = "() => document.querySelector('.pg-loss .chart').data[0].x.length"
BOUNDARY = "() => document.querySelector('.pg-output canvas.boundary-canvas').toDataURL()"
NEURONS = "() => document.querySelector('canvas.nd-maps').toDataURL()"


def test_mlp_playground_trains_redraws_and_edits(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=mlp-playground&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function(
        "() => document.querySelectorAll('.nd-hit').length === 2 * 4 + 4 * 2 + 2"
    )
    page.wait_for_function(f"() => ({LOSS_POINTS})() === 1")  # step 0
    boundary, neurons = page.evaluate(BOUNDARY), page.evaluate(NEURONS)

    page.select_option("[data-act=speed]", "500")
    page.click("[data-act=play]")
    page.wait_for_function(f"() => ({LOSS_POINTS})() > 100")
    page.click("[data-act=play]")  # pause
    page.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
    assert page.evaluate(LOSS_POINTS) > 100
    test_curve = "() => document.querySelector('.pg-loss .chart').data[1].x.length"
    assert page.evaluate(test_curve) > 100  # the test loss is measured every step too
    assert page.evaluate(BOUNDARY) != boundary  # the decision region moved
    assert page.evaluate(NEURONS) != neurons  # and so did the units' maps
    # The dashboard's waterfall: a row per layer (2 hidden + the output), one column a step.
    waterfall = page.get_attribute(".dash-waterfall canvas.wf-canvas", "aria-label")
    assert waterfall.startswith("Gradient norm of 3 stages over "), waterfall

    # Click a weight, type 3: the server sets the torch parameter and the curve thickens.
    # The edit is a step of the run: the timeline and the loss curve get it.
    before = page.evaluate("() => window.shaomai.store.get('step')")
    page.locator(".nd-hit").first.dispatch_event("click")
    page.fill(".nd-editor input", "3")
    page.press(".nd-editor input", "Enter")
    page.wait_for_function(
        "() => document.querySelector('.nd-edge').getAttribute('stroke-width') === '4.35'"
    )
    page.wait_for_function(f"() => window.shaomai.store.get('step') === {before + 1}")
    page.wait_for_function(
        f"() => document.querySelector('.pg-loss .chart').data[0].x.includes({before + 1})"
    )

    # Click the plane: a point of class 1 joins the training set and the URL.
    plane = page.locator(".pg-output canvas.boundary-canvas")
    box = plane.bounding_box()  # clicked as a user does: scrolled into view, not under the timeline
    plane.click(position={"x": box["width"] * 0.7, "y": box["height"] * 0.3})
    page.wait_for_function("() => window.shaomai.store.get('params').points.length === 1")
    assert "points=" in page.url
    screenshot(page, "mlp-playground-en")

    page.click("#lang-btn")
    page.wait_for_function(
        "() => document.querySelector('#lab-title').textContent.includes('游乐场')"
    )
    assert "学习率" in page.inner_text("#params")
    assert "训练损失" in page.inner_text("#view")
    screenshot(page, "mlp-playground-zh")


def test_relu_kink_prints_the_if_program(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=relu-kink&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function("() => document.querySelector('.rk-program')?.textContent.length > 0")
    assert page.inner_text(".rk-program") == "if x > 5:\n    z = 6*x - 23\nelse:\n    z = 7"
    assert "z = 6*x - 23" in page.inner_text("#view")
    screenshot(page, "relu-kink-en")

    # A slider changes a number: the server rewrites the program, no reset.
    page.eval_on_selector(
        "#param-a_b", "e => { e.value = '-6'; e.dispatchEvent(new Event('change')); }"
    )
    page.wait_for_function(
        "() => document.querySelector('.rk-program').textContent.startsWith('if x > 3:')"
    )
    assert page.inner_text(".rk-program") == "if x > 3:\n    z = 6*x - 11\nelse:\n    z = 7"


def test_activations_show_the_slopes_and_the_value_at_zero(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=activations&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function("() => document.querySelectorAll('.act-table tr[data-fn]').length === 5")

    def cell(fn, col):
        return page.inner_text(f".act-table tr[data-fn={fn}] td.{col}")

    assert cell("relu", "df0") == "0"  # PyTorch's ReLU'(0)
    assert cell("sigmoid", "max-df").startswith("0.25 (x = 0)")
    assert cell("tanh", "max-df").startswith("1 (x = 0)")
    assert cell("silu", "min-f").startswith("-0.2784")
    curves = page.evaluate("() => document.querySelectorAll('.act .chart')[1].data.length")
    assert curves == 5 + 2  # five slopes, their maxima, the values at 0
    screenshot(page, "activations-en")
