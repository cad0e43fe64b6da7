"""The engine in a real Chromium against a real uvicorn: play, draw, scrub, diverge, zh, reload."""

import logging
import re
import urllib.request

import plotly.graph_objects as go
import pytest
from plotly.basedatatypes import BaseTraceType

from backend.app import PLOTLY_CARTESIAN, PLOTLY_FULL, plotly_bundle
from tests.conftest import ROOT, screenshot

pytestmark = pytest.mark.browser


def loss_points(page) -> int:
    return page.evaluate("() => document.querySelector('.panel .chart').data[0].x.length")


def surface(page):
    """(rows of the loss-surface heatmap, points on the descent path, current point)."""
    return page.evaluate(
        """() => { const d = document.querySelectorAll('.panel .chart')[1].data;
                  return [d[0].z.length, d[1].x.length, d[3].x[0]]; }"""
    )


def test_linear_regression_plays_draws_switches_language_and_reloads(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=linear-regression&lang=en")
    page.wait_for_function("() => window.shaomai && window.shaomai.store.get('role') === 'driver'")
    assert page.inner_text("#lab-title") == "Linear regression by gradient descent"
    rows, path, start = surface(page)
    assert rows == 48 and path == 1 and start == 0  # w = 0 before training
    page.click("[data-act=play]")
    page.wait_for_function("() => document.querySelector('.panel .chart').data[0].x.length > 30")
    page.click("[data-act=play]")  # pause
    page.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
    assert loss_points(page) > 30
    rows, path, now = surface(page)
    assert rows == 48 and path > 30 and now > 0.5  # the path walked towards w = 1
    screenshot(page, "linear-regression-en")

    page.click("#lang-btn")
    page.wait_for_function(
        "() => document.querySelector('#lab-title').textContent.includes('线性回归')"
    )
    assert "学习率" in page.inner_text("#params")
    assert "lang=zh" in page.url
    screenshot(page, "linear-regression-zh")

    # Change a param through the form: it lands in the URL and survives a reload.
    page.select_option("#param-loss", "mse")
    page.wait_for_function("() => location.search.includes('loss=mse')")
    page.reload()
    page.wait_for_function("() => window.shaomai && window.shaomai.store.get('role') === 'driver'")
    assert page.eval_on_selector("#param-loss", "e => e.value") == "mse"
    assert "学习率" in page.inner_text("#params")


def test_live_stream_diverges_recovers_and_scrubs_back(live_server, page):
    url = (
        f"{live_server}/lab.html?lab=linear-regression&lang=en&dataset=live-stream&loss=mse&lr=1e-9"
    )
    page.goto(url)
    page.wait_for_function("() => window.shaomai && window.shaomai.store.get('role') === 'driver'")
    page.click("[data-act=play]")
    page.wait_for_function("() => window.shaomai.store.get('state') === 'diverged'")
    assert "Diverged" in page.inner_text("#banner")
    screenshot(page, "linear-regression-diverged")

    page.click("[data-act=reset]")
    page.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
    page.wait_for_function("() => document.querySelector('#banner').hidden")
    # A learning rate below the critical one, set through the URL-backed form state.
    page.evaluate(
        "() => window.shaomai.client.send({type: 'set', params: {features: 'zscore', lr: 0.01}})"
    )
    page.wait_for_function("() => location.search.includes('features=zscore')")
    page.click("[data-act=step10]")
    page.wait_for_function("() => window.shaomai.store.get('step') >= 10")
    page.click("[data-act=step10]")
    page.wait_for_function("() => window.shaomai.store.get('step') >= 20")
    live_loss = page.inner_text(".readout dd")

    # Scrub back to step 5: the shown frame is step 5, the URL remembers it.
    page.eval_on_selector(
        ".scrubber input", "e => { e.value = 5; e.dispatchEvent(new Event('input')); }"
    )
    page.wait_for_function("() => document.querySelector('#frame-step').textContent === '5'")
    assert "step=5" in page.url
    assert page.inner_text(".readout dd") != live_loss
    screenshot(page, "linear-regression-scrubbed")
    page.click(".scrubber .live")
    page.wait_for_function("() => document.querySelector('#frame-step').textContent === '20'")


def test_catalog_lists_chapters(live_server, page):
    page.goto(f"{live_server}/?lang=zh")
    page.wait_for_selector("a.card[data-lab=linear-regression]")
    assert "第 1 章" in page.inner_text("#chapters")
    page.click("#lang-btn")
    page.wait_for_function(
        "() => document.querySelector('#chapters').textContent.includes('Chapter 1')"
    )
    page.click("a.card[data-lab=linear-regression]")
    page.wait_for_selector("#lab-title")
    page.wait_for_function("() => window.shaomai && window.shaomai.store.get('role') === 'driver'")


def test_vendor_route_serves_the_cartesian_bundle_else_the_full_one(live_server, caplog):
    with urllib.request.urlopen(f"{live_server}/vendor/plotly.min.js") as r:
        served = r.read()
    # `make` installs the cartesian bundle; without npm the app falls back to the full one.
    expected = PLOTLY_CARTESIAN if PLOTLY_CARTESIAN.is_file() else PLOTLY_FULL
    assert served == expected.read_bytes()
    with caplog.at_level(logging.WARNING, logger="shaomai"):
        assert plotly_bundle(ROOT / "no-such-bundle.js") == PLOTLY_FULL
    assert "no-such-bundle.js is missing" in caplog.text


def test_served_plotly_has_every_trace_type_the_pages_draw(live_server, page):
    # Trace types named in the frontend's code (`type: 'bar'`): those that are plotly's.
    classes = [getattr(go, name) for name in go.__all__]
    traces = {c().type for c in classes if isinstance(c, type) and issubclass(c, BaseTraceType)}
    named = set()
    for path in (ROOT / "frontend" / "js").rglob("*.js"):
        named |= set(re.findall(r"type: '([a-z0-9]+)'", path.read_text()))
    used = named & traces
    assert {"scatter", "bar", "heatmap", "contour"} <= used
    page.goto(f"{live_server}/lab.html?lab=linear-regression&lang=en")  # a view built on plotly
    page.wait_for_function("() => window.shaomai && window.Plotly")
    have = set(page.evaluate("() => Object.keys(window.Plotly.PlotSchema.get().traces)"))
    assert used <= have, used - have


def test_gpt_draws_its_first_frames_before_plotly_arrives(live_server, page):
    held = []
    page.route("**/vendor/plotly.min.js", lambda route: held.append(route))  # answered below
    page.goto(f"{live_server}/lab.html?lab=gpt&lang=en")
    page.wait_for_function("() => window.shaomai && window.shaomai.store.get('role') === 'driver'")
    page.wait_for_function("() => document.querySelector('#view').dataset.step === '0'")
    page.click("[data-act=step10]")  # rows for the curves while they cannot be drawn
    page.wait_for_function("() => document.querySelector('#frame-step').textContent === '10'")
    page.wait_for_function("() => window.shaomai.store.get('step') === 10")
    assert held, "the page asked for plotly once its first frame was drawn"
    assert page.evaluate("() => window.Plotly === undefined")
    assert page.eval_on_selector_all(".js-plotly-plot", "els => els.length") == 0
    assert page.eval_on_selector(".gpt-grid canvas", "c => c.width > 0")  # the attention maps
    held[0].continue_()
    loss = "document.querySelectorAll('#view .panel .chart')[0]"
    page.wait_for_function(f"() => {loss}.data && {loss}.data[0].x.length >= 11")
    steps = page.evaluate(f"() => {loss}.data[0].x")
    assert steps == list(range(11))  # the rows that came before plotly, drawn when it came


def test_a_curve_with_one_point_shows_it_until_it_becomes_a_line(live_server, page):
    """A plotly line through one point draws nothing: linear-regression's loss at step 0
    is one point, shown as a marker; with a second point the curve is a plain line."""
    page.goto(f"{live_server}/lab.html?lab=linear-regression&lang=en")
    page.wait_for_function("() => window.shaomai && window.shaomai.store.get('role') === 'driver'")
    page.wait_for_function("() => document.querySelector('.panel .chart').data?.[0].x.length === 1")
    shown = """() => { const el = document.querySelector('.panel .chart');
        return [el.data[0].mode, el.querySelectorAll('.scatterlayer .trace .points path').length]; }"""
    page.wait_for_function(f"() => ({shown})()[1] === 1")
    assert page.evaluate(shown) == ["lines+markers", 1]
    page.click("[data-act=step]")
    page.wait_for_function("() => document.querySelector('.panel .chart').data[0].x.length === 2")
    page.wait_for_function(f"() => ({shown})()[0] === 'lines'")
    assert page.evaluate(shown) == ["lines", 0]
    assert page.evaluate(
        "() => document.querySelector('.panel .chart .scatterlayer .trace .js-line').getAttribute('d')"
    )


def test_a_refusal_reads_in_the_pages_language(live_server, page):
    """The server names its message (`key`); a Chinese page shows the Chinese string."""
    page.goto(f"{live_server}/lab.html?lab=linear-regression&lang=zh")
    page.wait_for_function("() => window.shaomai && window.shaomai.store.get('role') === 'driver'")
    page.evaluate("() => window.shaomai.client.send({type: 'join', session: 'another'})")
    page.wait_for_function("() => !document.querySelector('#toast').hidden")
    # A sentence in the page's language, without the code's title in front (issue 12).
    assert page.inner_text("#toast") == "这个连接已经有一个会话了"
