"""Every lab in the catalog (GET /api/labs from a real uvicorn) opens in Chromium, plays (or
runs its first action) and draws a frame, with no console error and no page error."""

import json
import urllib.request

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
DRAWN = "() => window.shaomai.store.get('shownStep') !== undefined"


def catalog(base: str) -> list[dict]:
    with urllib.request.urlopen(f"{base}/api/labs", timeout=10) as r:
        return json.load(r)


def exercise(page, base: str, lab: dict) -> str:
    """Open the lab, press play (a lab that does not train: its view's first button)."""
    page.goto(f"{base}/lab.html?lab={lab['id']}&lang=en")
    page.wait_for_function(READY, timeout=20_000)
    # Play where the catalog says it does something (a condition: on the default params).
    plays = lab.get("plays", True)
    if isinstance(plays, dict):
        props = lab["schema"]["properties"]
        plays = all(props[k].get("default") == v for k, v in plays.items())
    if lab.get("trains") and plays:
        page.wait_for_function(DRAWN, timeout=20_000)  # the first frame, before play
        before = page.evaluate("() => window.shaomai.store.get('shownStep')")
        page.click("[data-act=play]")
        page.wait_for_function(
            f"() => window.shaomai.store.get('shownStep') > {before}"
            " || ['done', 'diverged'].includes(window.shaomai.store.get('state'))",
            timeout=30_000,
        )
        page.click("[data-act=play]")  # pause again: the next lab gets the CPU
        return "played"
    # A lab without training: whatever it shows first, then the first button of its view.
    page.wait_for_function(
        "() => document.querySelector('#view').children.length > 0"
        " && document.querySelector('#frame-step').textContent !== '–'"
        " || document.querySelector('#view canvas, #view .js-plotly-plot') !== null",
        timeout=20_000,
    )
    button = page.locator("#view button:visible:enabled").first
    if button.count():
        button.click()
        page.wait_for_timeout(500)  # its answer: an infer frame or a param change
        return "clicked"
    return "opened"


def test_every_lab_opens_plays_and_draws_without_errors(live_server, browser):
    labs = catalog(live_server)
    assert len(labs) >= 10, [lab["id"] for lab in labs]
    failures = {}
    done = {}
    for lab in labs:
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
        page = ctx.new_page()
        errors: list[str] = []
        page.on("console", lambda m, e=errors: e.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc, e=errors: e.append(f"uncaught: {exc}"))
        try:
            done[lab["id"]] = exercise(page, live_server, lab)
            page.wait_for_timeout(200)  # late errors of the last draw
        except Exception as exc:  # noqa: BLE001 - every lab is tried; the report names each
            errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
            screenshot(page, f"every-lab-{lab['id']}-failed")
        finally:
            ctx.close()
        if errors:
            failures[lab["id"]] = errors
    assert not failures, f"labs with errors (others: {done}):\n" + json.dumps(failures, indent=1)


PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
WIDTH = "() => document.documentElement.scrollWidth"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_lab_fits_a_phone_without_sideways_scroll(live_server, browser, lang):
    """On a 390-px phone no lab is wider than the screen: its first frame, then its params."""
    wide = {}
    ctx = browser.new_context(**PHONE, locale="zh-CN" if lang == "zh" else "en-US")
    page = ctx.new_page()
    try:
        for lab in catalog(live_server):
            try:
                page.goto(f"{live_server}/lab.html?lab={lab['id']}&lang={lang}")
                page.wait_for_function(READY, timeout=20_000)
                page.wait_for_function(
                    "() => document.querySelector('#view').children.length > 0", timeout=20_000
                )
                page.wait_for_timeout(300)  # late layout: plotly, canvases sized to their panel
                widths = [page.evaluate(WIDTH)]
                page.click("#params-box summary", timeout=5_000)  # a tap: nothing may cover it
                widths.append(page.evaluate(WIDTH))
            except Exception as exc:  # noqa: BLE001 - every lab is tried; the report names each
                widths = [f"{type(exc).__name__}: {str(exc).splitlines()[0]}"]
            if widths != [w for w in widths if isinstance(w, int) and w <= 390]:
                wide[lab["id"]] = widths
                screenshot(page, f"every-lab-phone-{lab['id']}-{lang}-wide")
    finally:
        ctx.close()
    assert not wide, f"labs wider than a 390-px phone ([first frame, params open]): {wide}"
