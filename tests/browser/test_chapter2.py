"""Chapter 2 in a real Chromium: logistic trains and its boundary moves, softmax-ce shows the
curriculum's cross-entropy numbers and the float32 overflow, the SVM trains its margin."""

import json

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"


def chart_data(page, selector: str):
    return page.evaluate(f"() => document.querySelector({selector!r}).data")


def no_raw_keys(page, prefix: str) -> None:
    """Every string of the view was translated (a missing key shows as the key itself)."""
    text = page.inner_text("#view")
    assert f"{prefix}." not in text, text


def test_logistic_trains_and_the_boundary_moves(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=logistic&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function("() => document.querySelector('.boundary-chart').data?.length >= 4")
    before = json.dumps(chart_data(page, ".boundary-chart")[0]["z"])
    assert "TP 100" in page.inner_text(".logistic-metrics")  # θ = 0: p = 0.5, all say yes

    page.click("[data-act=play]")
    page.wait_for_function("() => window.shaomai.store.get('step') >= 150")
    page.click("[data-act=play]")  # pause
    page.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
    page.wait_for_function(
        "() => document.querySelector('.logistic-loss .chart').data[0].x.length > 100"
    )
    loss = chart_data(page, ".logistic-loss .chart")[0]
    assert loss["y"][-1] < loss["y"][0] < 0.7
    page.wait_for_function(
        f"() => JSON.stringify(document.querySelector('.boundary-chart').data[0].z) !== {before!r}"
    )
    z = chart_data(page, ".boundary-chart")[0]["z"]
    assert min(map(min, z)) < 0.1 and max(map(max, z)) > 0.9  # a real boundary now

    # The threshold is live: the contour line moves to it, nothing resets.
    page.eval_on_selector(
        "#logistic-threshold", "e => { e.value = '0.8'; e.dispatchEvent(new Event('change')); }"
    )
    page.wait_for_function("() => window.shaomai.store.get('params').threshold === 0.8")
    page.wait_for_function(
        "() => document.querySelector('.boundary-chart').data[1].contours.start === 0.8"
    )

    # Clicking the plot adds a point of the chosen class, drawn as a diamond.
    page.click(".boundary-class[data-cls='1']")
    box = page.evaluate(
        """() => { const el = document.querySelector('.boundary-chart');
        const fl = el._fullLayout, r = el.getBoundingClientRect();
        return {x: r.left + fl.xaxis._offset + fl.xaxis.l2p(-3),
                y: r.top + fl.yaxis._offset + fl.yaxis.l2p(-3)}; }"""
    )
    page.mouse.click(box["x"], box["y"])
    page.wait_for_function("() => window.shaomai.store.get('params').points.length === 1")
    point = page.evaluate("() => window.shaomai.store.get('params').points[0]")
    assert point[2] == 1 and point[0] == pytest.approx(-3, abs=0.1)
    page.wait_for_function(
        "() => document.querySelector('.boundary-chart').data[3].marker.symbol.includes('diamond')"
    )
    no_raw_keys(page, "logistic")
    screenshot(page, "logistic-trained")


def test_softmax_ce_shows_the_curriculum_numbers(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=softmax-ce&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function("() => document.querySelector('.ce-numbers dd')")
    ce = page.inner_text(".ce-numbers")
    for number in ("0.105", "1.204", "4.605"):
        assert number in ce
    table = page.inner_text(".sm-pred")
    for pick in ("0.178", "0.202", "0.129", "0.236", "0.221", "1.665"):
        assert pick in table
    assert "NaN" not in page.inner_text(".sm-float32")

    page.click("button[data-key='softmax-ce.preset_overflow']")
    page.wait_for_function("() => document.querySelector('.sm-float32').innerText.includes('NaN')")
    assert "∞" in page.inner_text(".sm-float32")  # exp(90) in float32
    assert page.input_value(".logit-row .logit-box") == "90"
    no_raw_keys(page, "softmax-ce")
    screenshot(page, "softmax-ce-overflow")

    page.click("#lang-btn")
    page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
    assert "自信地答错" in page.inner_text(".ce-numbers")
    no_raw_keys(page, "softmax-ce")
    screenshot(page, "softmax-ce-zh")


def test_svm_trains_and_rings_support_vectors(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=svm&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function("() => document.querySelector('.boundary-chart').data?.length >= 6")
    page.click("[data-act=play]")
    page.wait_for_function("() => window.shaomai.store.get('step') >= 300")
    page.click("[data-act=play]")
    page.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
    page.wait_for_function(
        "() => document.querySelector('.svm-objective .chart').data[0].x.length > 100"
    )
    traces = chart_data(page, ".boundary-chart")
    assert [tr["type"] for tr in traces[:4]] == ["heatmap", "contour", "contour", "contour"]
    ringed = traces[-1]
    assert 2 <= len(ringed["x"]) < 40  # a few points on or inside the margin
    info = page.inner_text(".svm-info")
    assert "margin width" in info and "hinge" in info

    page.select_option("#param-loss", "squared")
    page.wait_for_function("() => window.shaomai.store.get('params').loss === 'squared'")
    page.wait_for_function(
        "() => document.querySelector('.svm-curves .chart').data[2].line.width > 3"
    )
    no_raw_keys(page, "svm")
    screenshot(page, "svm-trained")
