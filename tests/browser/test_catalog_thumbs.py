"""The catalog's lab pictures (frontend/thumbs, from `python -m tools.thumbnails`) and the
curriculum's labs not served yet, named under their chapter (frontend/js/curriculum.js)."""

import json
from pathlib import Path

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser
THUMBS = Path(__file__).resolve().parents[2] / "frontend" / "thumbs"

LOADED = """async () => {
  const out = {};
  // Read each picture's lab now: a picture that fails later is replaced by its tile
  // (catalog.js), which detaches the img while this walk awaits another one.
  const imgs = [...document.querySelectorAll('#chapters .card img.thumb')]
    .map((img) => [img, img.closest('.card').dataset.lab]);
  for (const [img, lab] of imgs) {
    img.scrollIntoView();  // lazy: loaded when near the viewport
    if (!img.complete) await new Promise((ok) => { img.addEventListener('load', ok); img.addEventListener('error', ok); });
    if (img.isConnected && img.naturalWidth) out[lab] = {w: img.naturalWidth, alt: img.alt};
  }
  return out;
}"""


def test_every_lab_has_a_picture_and_the_catalog_shows_it(live_server, page):
    page.goto(f"{live_server}/?lang=en")
    page.wait_for_selector("#chapters .card")
    labs = page.evaluate("() => fetch('/api/labs').then(r => r.json())")
    missing = [lab["id"] for lab in labs if not (THUMBS / f"{lab['id']}.webp").is_file()]
    assert not missing, f"run python -m tools.thumbnails {' '.join(missing)}"
    shown = page.evaluate(LOADED)
    assert set(shown) == {lab["id"] for lab in labs}
    assert all(v["w"] > 0 for v in shown.values()), shown
    assert shown["apple"]["alt"].startswith("A frame of the")
    assert page.locator("img.thumb[loading=lazy]").count() == len(labs)
    assert page.locator(".chapter .coming").count() == 0  # every curriculum lab is served today
    page.evaluate("window.scrollTo(0, 0)")
    screenshot(page, "catalog-thumbs-en")


def test_zh_phone_fallback_and_labs_to_come(live_server, browser):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    page = ctx.new_page()
    try:
        # The server without svm and with no picture for softmax-ce: a tile, and svm "coming".
        def drop_svm(route):
            labs = [lab for lab in json.loads(route.fetch().text()) if lab["id"] != "svm"]
            route.fulfill(status=200, content_type="application/json", body=json.dumps(labs))

        page.route("**/api/labs", drop_svm)
        page.route("**/thumbs/softmax-ce.webp", lambda r: r.fulfill(status=404, body=""))
        page.goto(f"{live_server}/?lang=zh")
        page.wait_for_selector("#chapters .card")
        shown = page.evaluate(LOADED)
        assert "softmax-ce" not in shown and shown["apple"]["w"] > 0
        assert shown["apple"]["alt"].endswith("”实验运行中的画面")
        tile = page.locator(".card[data-lab=softmax-ce] .thumb.none")
        assert tile.inner_text() == "2"
        coming = page.locator(".chapter .coming")
        assert coming.count() == 1 and coming.get_attribute("data-labs") == "svm"
        assert coming.inner_text() == "本章即将上线：支持向量机"
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.evaluate("window.scrollTo(0, 0)")
        screenshot(page, "catalog-thumbs-zh-phone")
    finally:
        ctx.close()
