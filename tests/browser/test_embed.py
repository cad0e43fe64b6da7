"""The embed example: each iframe is as tall as its lab (the lab posts its height, the page's
embed.js sets it), so the picture shows without scrolling inside the frame, desktop and phone."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
# The inner page's height no more than its frame's: nothing to scroll inside.
FITS = """() => [...document.querySelectorAll('iframe')].every((f) => {
  const d = f.contentDocument.documentElement;
  return d.scrollHeight <= f.clientHeight + 1; })"""


@pytest.mark.parametrize("size", [(1400, 1000), (390, 844)], ids=["desktop", "phone"])
def test_embed_iframes_show_the_whole_lab(live_server, browser, size):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    pg = context.new_page()
    pg.goto(f"{live_server}/examples/embed.html")
    frames = pg.frames[1:]
    assert len(frames) == 2
    for f in frames:
        f.wait_for_function(READY)
        f.wait_for_function("() => document.querySelector('#view canvas, #view .js-plotly-plot')")
    pg.wait_for_function(FITS)  # the heights arrive after the labs' first frames
    heights = pg.eval_on_selector_all("iframe", "fs => fs.map((f) => f.clientHeight)")
    assert all(h > 560 for h in heights)
    screenshot(pg, f"embed-{size[0]}")
    context.close()
