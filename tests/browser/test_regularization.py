"""The `regularization` lab in a real Chromium: dropout arms side by side (accuracy, gap,
held-out loss with early-stopping marks, dropout on a real activation), then the L1 vs L2
and batch-size studies from their buttons; en + zh, desktop and a 390×844 phone."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
AT = "(s) => document.querySelector('#view').dataset.step === s"


def test_regularization_dropout_in_english(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=regularization&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function("() => document.querySelector('#view').dataset.step !== undefined")
    for n in ("10", "20", "30"):
        page.click("[data-act=step10]")
        page.wait_for_function(AT, arg=n)
    names = page.evaluate(
        "() => document.querySelector('.dash-chart .chart').data.map((tr) => tr.name)"
    )
    assert names[:4] == ["p=0", "p=0.25", "p=0.5", "p=0.75"]
    scales = page.evaluate(
        "() => [...document.querySelectorAll('.reg-table')].map((t) => t.dataset.p)"
    )
    assert scales == ["0.25", "0.5", "0.75"]  # p = 0 has nothing to drop
    assert "train (×2)" in page.inner_text(".reg-table[data-p='0.5']")
    page.wait_for_function(  # every arm's best held-out step is marked on the curve
        "() => (document.querySelector('.reg-val .chart').dataset.best || '').split(',').length === 4"
    )
    page.wait_for_timeout(700)  # the curves take new rows a few times a second
    screenshot(page, "regularization-en")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(300)
    screenshot(page, "regularization-en-phone")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # no sideways scroll


def test_regularization_studies_in_chinese(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=regularization&lang=zh")
    page.wait_for_function(READY)
    page.wait_for_function("() => document.querySelector('#view').dataset.step !== undefined")
    page.click("[data-act=study-l1_l2]")
    page.wait_for_function("() => window.shaomai.store.get('params').study === 'l1_l2'")
    page.wait_for_function(AT, arg="0")
    page.click("[data-act=step10]")
    page.wait_for_function(AT, arg="10")
    assert page.is_hidden(".reg-drop") or not page.query_selector(".reg-table")
    assert "|w| < 0.001" in page.inner_text(".dash-readout")
    page.click("[data-act=study-batch_size]")
    page.wait_for_function("() => window.shaomai.store.get('params').study === 'batch_size'")
    page.click("[data-act=scale-lr]")
    page.wait_for_function("() => window.shaomai.store.get('params').scale_lr === true")
    page.wait_for_function(AT, arg="0")
    page.click("[data-act=step10]")
    page.wait_for_function(AT, arg="10")
    assert "所有批大小用同一个学习率" in page.inner_text(".reg-study")
    names = page.evaluate(
        "() => document.querySelector('.dash-chart .chart').data.map((tr) => tr.name)"
    )
    assert names[:3] == ["b=8", "b=32", "b=128"]
    # Every chart's step axis reads in Chinese (the held-out chart had its own "step").
    page.wait_for_function(
        "() => [...document.querySelectorAll('.js-plotly-plot')].some((c) => c.layout"
        " && c.layout.xaxis && c.layout.xaxis.title && c.layout.xaxis.title.text === '步')"
    )
    english = page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot')].filter((c) => c.layout"
        " && c.layout.xaxis && c.layout.xaxis.title && c.layout.xaxis.title.text === 'step').length"
    )
    assert english == 0
    page.wait_for_timeout(700)
    screenshot(page, "regularization-zh")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(300)
    screenshot(page, "regularization-zh-phone")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # no sideways scroll
