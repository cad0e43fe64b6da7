"""The enlarged map (mapOverlay.js) never blocks the page: it closes by ×, Escape or a click
outside; play, step and the timeline stay uncovered and work while it is open; it fits a
390 × 844 phone between the page's controls. Desktop and phone, en and zh."""

import pytest

from tests.browser.settle import settle
from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
OPEN = ".attn-zoom:not([hidden])"
# Where the panel is, and whether each control's centre is the control itself (not covered).
GEOMETRY = """() => {
  const box = document.querySelector('.attn-zoom .mg-zoom-box').getBoundingClientRect();
  const close = document.querySelector('.attn-zoom .mg-close').getBoundingClientRect();
  const free = (sel) => { const el = document.querySelector(sel), r = el.getBoundingClientRect();
    if (r.bottom < 0 || r.top > innerHeight) return null;  // scrolled away: nothing to cover
    const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
    return !!hit && (hit === el || el.contains(hit)); };
  return {box: [box.left, box.top, box.right, box.bottom], close: [close.width, close.height],
          play: free('[data-act=play]'), step: free('[data-act=step]'), scrub: free('#scrubber input'),
          vw: innerWidth, vh: innerHeight, sw: document.documentElement.scrollWidth};
}"""


def enlarge(page, tap=False):
    grid = page.locator(".attn-main")
    grid.scroll_into_view_if_needed()
    b = grid.bounding_box()
    if tap:
        page.tap(".attn-main", position={"x": b["width"] * 0.1, "y": b["height"] * 0.5})
    else:
        page.mouse.click(b["x"] + b["width"] * 0.1, b["y"] + b["height"] * 0.5)
    page.wait_for_selector(OPEN)


def check_geometry(page):
    settle(page, ".attn-zoom .mg-zoom-box", ".attn-zoom .mg-close", ".dock")
    g = page.evaluate(GEOMETRY)
    left, top, right, bottom = g["box"]
    assert left >= 0 and right <= g["vw"] and top >= 0 and bottom <= g["vh"], g  # it fits
    assert g["sw"] <= g["vw"], g
    assert g["close"][0] >= 44 and g["close"][1] >= 44, g
    assert g["play"] is not False and g["step"] is not False and g["scrub"] is not False, g
    return g


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_enlarged_map_leaves_the_controls_and_closes_three_ways(live_server, page, lang):
    page.goto(f"{live_server}/lab.html?lab=gpt&lang={lang}")
    page.wait_for_function(READY)
    page.wait_for_selector(".attn-main")
    enlarge(page)
    g = check_geometry(page)
    assert g["play"] is True  # the toolbar is on screen, and uncovered
    screenshot(page, f"map-overlay-desktop-{lang}")
    page.click("[data-act=step]")  # a control works while the map is open; the map stays
    page.wait_for_function("() => window.shaomai.store.get('step') >= 1")
    assert page.is_visible(OPEN)
    page.mouse.click(5, page.viewport_size["height"] - 5)  # outside, on nothing that acts
    page.wait_for_selector(".attn-zoom", state="hidden")
    assert page.evaluate("() => window.shaomai.store.get('head')") is None
    enlarge(page)
    page.click(".attn-zoom .mg-close")
    page.wait_for_selector(".attn-zoom", state="hidden")
    enlarge(page)
    page.keyboard.press("Escape")
    page.wait_for_selector(".attn-zoom", state="hidden")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_enlarged_map_on_a_phone(live_server, browser, lang):
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    )
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        pg.goto(f"{live_server}/lab.html?lab=gpt&lang={lang}")
        pg.wait_for_function(READY)
        pg.wait_for_selector(".attn-main")
        enlarge(pg, tap=True)
        g = check_geometry(pg)
        assert g["play"] is True and g["scrub"] is True  # the sticky bar stays usable
        dock = pg.locator(".dock").bounding_box()
        assert g["box"][3] <= dock["y"] + 1  # the panel ends above the sticky bar
        screenshot(pg, f"map-overlay-phone-{lang}")
        pg.tap("[data-act=step]")
        pg.wait_for_function("() => window.shaomai.store.get('step') >= 1")
        assert pg.is_visible(OPEN)
        pg.tap(".attn-zoom .mg-close")
        pg.wait_for_selector(".attn-zoom", state="hidden")
        assert not errors, errors
    finally:
        context.close()
