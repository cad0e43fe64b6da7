"""The shared charts and readouts (issue 12's smaller things): while the timeline shows the
past, the history charts draw a cursor at the step shown and "now" panels say which step
they show; step axes and the screen-reader text are in the page's language; legends sit
above the plots; a chart's first point has readable ticks; a toast never covers a value."""

import re

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"

# Every plotly chart of the dashboard: its x title, cursor shapes, legend and plot boxes.
CHARTS = """() => [...document.querySelectorAll('.dash-chart .js-plotly-plot')].map((gd) => {
  const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  return {
    xtitle: gd.querySelector('.xtitle')?.textContent ?? null,
    cursor: (gd.layout.shapes || []).filter((s) => s.name === 'viewing').map((s) => s.x0),
    legend: gd.querySelector('.legend') ? box(gd.querySelector('.legend .bg') || gd.querySelector('.legend')) : null,
    plot: box(gd.querySelector('.nsewdrag')),
    xticks: [...gd.querySelectorAll('.xtick text')].map((t) => t.textContent),
    yticks: [...gd.querySelectorAll('.ytick text')].map((t) => t.textContent),
  };
})"""

SCRUB_TO = """(s) => { const r = document.querySelector('.scrubber input');
  r.value = String(s); r.dispatchEvent(new Event('input')); }"""


def open_lab(page, base, lab, lang, **q):
    extra = "".join(f"&{k}={v}" for k, v in q.items())
    page.goto(f"{base}/lab.html?lab={lab}&lang={lang}{extra}")
    page.wait_for_function(READY)


def play_to(page, step):
    page.click("[data-act=play]")
    page.wait_for_function(f"() => window.shaomai.store.get('step') >= {step}")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_past_step_cursor_titles_and_step_words(live_server, page, lang):
    open_lab(page, live_server, "digits", lang)
    play_to(page, 60)
    # The measured steps per second while playing (the stream's, not the asked speed).
    page.wait_for_function("() => /\\d/.test(document.querySelector('#rate').textContent)")
    rate = page.inner_text("#rate")
    assert re.fullmatch(r"\d+(\.\d)? steps/s" if lang == "en" else r"每秒 \d+(\.\d)? 步", rate), (
        rate
    )
    page.click("[data-act=play]")
    page.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
    state = page.inner_text(".controls .state")
    assert (
        re.search(r"第 \d+ 步" if lang == "zh" else r"step \d+", state) and "单步" not in state
    ), state

    # Live: no cursor, the model panel says "now", the step axes in the page's language.
    charts = page.evaluate(CHARTS)
    assert charts and all(c["cursor"] == [] for c in charts)
    assert {c["xtitle"] for c in charts} == {"步" if lang == "zh" else "step"}
    info = page.locator(".panel", has=page.locator("dl")).last
    now_title = "当前模型" if lang == "zh" else "This model"
    assert info.locator("h3").inner_text() == now_title

    # The past: every history chart's cursor, the timeline's and the dock's readouts and the
    # panel's title all name the one step whose frame is drawn.
    page.evaluate(SCRUB_TO, 30)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.dash-chart .js-plotly-plot')].every((gd) =>"
        " (gd.layout.shapes || []).some((s) => s.name === 'viewing' &&"
        " s.x0 === window.shaomai.store.get('shownStep')))"
    )
    shown = int(page.inner_text("#frame-step"))
    assert 20 <= shown <= 40
    scrub = page.inner_text(".scrubber output")
    assert re.search(rf"(第 {shown} 步|Viewing step {shown}\b)", scrub), (scrub, shown)
    past_title = (
        f"正在显示过去的第 {shown} 步" if lang == "zh" else f"Showing step {shown} of the past"
    )
    assert info.locator("h3").inner_text() == past_title
    screenshot(page, f"charts-past-{lang}")

    page.click(".scrubber .live")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.dash-chart .js-plotly-plot')].every((gd) =>"
        " !(gd.layout.shapes || []).some((s) => s.name === 'viewing'))"
    )
    assert info.locator("h3").inner_text() == now_title


def test_legends_above_the_plots(live_server, page):
    open_lab(page, live_server, "digits", "en")
    play_to(page, 30)
    page.click("[data-act=play]")
    page.wait_for_function("() => document.querySelectorAll('.dash-chart .legend').length >= 2")
    charts = [c for c in page.evaluate(CHARTS) if c["legend"]]
    assert len(charts) >= 2
    for c in charts:
        # The legend's box ends where the plot area starts, or above it: never over a curve.
        assert c["legend"][3] <= c["plot"][1] + 1, c


@pytest.mark.parametrize("viewport", [(1400, 1000), (390, 844)])
def test_first_point_ticks_readable(live_server, browser, viewport):
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    page = context.new_page()
    try:
        open_lab(page, live_server, "linear-regression", "zh")
        page.wait_for_function(
            "() => document.querySelector('.dash-chart .js-plotly-plot .ytick text')"
        )
        loss = page.evaluate(CHARTS)[0]
        # Step 0's one loss value on a log axis: a few labels, not every minor tick of two
        # decades; whole, non-negative steps on the x axis.
        assert 2 <= len(loss["yticks"]) <= 6, loss["yticks"]
        assert loss["xticks"] and all(re.fullmatch(r"\d+", t) for t in loss["xticks"]), loss[
            "xticks"
        ]
        screenshot(page, f"charts-step0-{viewport[0]}")
    finally:
        context.close()


def test_screen_reader_text_uses_the_page_language(live_server, page):
    open_lab(page, live_server, "digits", "zh")
    play_to(page, 20)
    page.wait_for_function("() => document.querySelector('#announce').textContent.includes('步')")
    text = page.inner_text("#announce")
    # The values by their legends' names, no scalar keys (loss, grad_norm.layers.0...).
    assert re.search(r"第 \d+ 步", text) and not re.search(r"[A-Za-z_]{2,}", text), text
    page.click("[data-act=play]")


@pytest.mark.parametrize("viewport", [(1400, 1000), (390, 844)])
def test_toast_never_covers_a_value(live_server, browser, viewport):
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    page = context.new_page()
    try:
        open_lab(page, live_server, "linear-regression", "en")
        page.evaluate("() => window.shaomai.client.send({ type: 'set', params: { lr: 1e9 } })")
        page.wait_for_selector("#toast", state="visible")
        assert (
            page.evaluate("() => getComputedStyle(document.querySelector('#toast')).position")
            != "fixed"
        )
        # In the dock's flow, under the controls: on a desktop no panel (chart, readout) is
        # under it; on a phone it is a line of the sticky bar (play, step, the timeline).
        assert page.evaluate("() => !!document.querySelector('#toast').closest('.dock')")
        if viewport[0] < 760:
            screenshot(page, f"charts-toast-{viewport[0]}")
            page.wait_for_selector("#toast", state="hidden")
            return
        overlaps = page.evaluate("""() => {
          const t = document.querySelector('#toast').getBoundingClientRect();
          return [...document.querySelectorAll('.panel, .readout, .timeline-row')].filter((el) => {
            const r = el.getBoundingClientRect();
            return r.width && r.left < t.right && t.left < r.right && r.top < t.bottom && t.top < r.bottom;
          }).map((el) => el.className);
        }""")
        assert overlaps == []
        screenshot(page, f"charts-toast-{viewport[0]}")
        page.wait_for_selector("#toast", state="hidden")  # it goes by itself
    finally:
        context.close()
