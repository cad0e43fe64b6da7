"""A chart's legend never covers its data: on the labs with the most curves (regularization's
accuracy, 4 arms × train/held out; sparse-attention's first-token chart, 5 arms × mass and
uniform share), at desktop and phone width, en and zh, every legend box lies outside the plot
area, lists one entry per arm, and shows them all (no legend scrollbar hiding one)."""

import pytest

from tests.browser.settle import settle
from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
AT = "(s) => document.querySelector('#view').dataset.step === s"
# Per chart with a legend: its legend's box, the plot area's (plotly's drag rectangle), the
# number of legend entries and whether plotly drew a scrollbar for them.
BOXES = """() => [...document.querySelectorAll('#view .dash-chart .chart')].map((c) => {
  const lg = c.querySelector('g.legend');
  const plot = c.querySelector('.draglayer .xy .nsewdrag');
  if (!lg || !plot) return null;
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const bar = lg.querySelector('.scrollbar');
  const barH = bar ? bar.getBoundingClientRect().height : 0;
  return { legend: box(lg), plot: box(plot), entries: lg.querySelectorAll('.traces').length, bar: barH,
           title: c.closest('.panel')?.querySelector('h2, h3')?.textContent || '' };
}).filter(Boolean)"""

CASES = [("regularization", 4, ("10", "20")), ("sparse-attention", 5, ("10", "20"))]


def overlap(a, b) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(0.0, w) * max(0.0, h)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("lab,arms,steps", CASES, ids=[c[0] for c in CASES])
def test_legends_sit_outside_the_plot_with_one_entry_per_arm(
    live_server, page, lab, arms, steps, lang
):
    page.goto(f"{live_server}/lab.html?lab={lab}&lang={lang}")
    page.wait_for_function(READY)
    page.wait_for_function("() => document.querySelector('#view').dataset.step !== undefined")
    for n in steps:  # past the first evaluations: the multi-curve charts have points
        page.click("[data-act=step10]")
        page.wait_for_function(AT, arg=n)
    page.evaluate("() => document.fonts.ready")
    for size, tag in (
        ({"width": 1440, "height": 900}, "desktop"),
        ({"width": 390, "height": 844}, "phone"),
    ):
        page.set_viewport_size(size)
        # Settled: every chart with a legend has redrawn at this width (plotly's own resize).
        settle(page, ".js-plotly-plot", ".js-plotly-plot .legend")
        charts = page.evaluate(BOXES)
        multi = [c for c in charts if c["entries"] > 1]
        assert multi, charts
        for c in charts:
            assert overlap(c["legend"], c["plot"]) < 1.0, (tag, c)
            assert c["bar"] < 1.0, (tag, c)  # no scrollbar: every entry is shown
            assert c["entries"] <= arms + 2, (tag, c)  # one a arm (+ kept runs, none here)
        assert any(c["entries"] == arms for c in multi), (tag, charts)
        screenshot(page, f"legends-{lab}-{lang}-{tag}")
