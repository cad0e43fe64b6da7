"""Presenter mode at 1280 × 720 once a class has joined (the walkthrough's M7, m19): the class
tools (Share, Fork, "N connected", the bandwidth, Low bandwidth, Ask the class, Keep this run)
sit on ONE compact row under the run's controls, and the dashboard takes what is left: the
attention panel's explanation and info column end on screen; with a lesson and its poll, the
poll's Close voting / Hide and the lesson's Back / Next are on screen without scrolling.
"Ask the class" stays where it is whether the run is paused or playing.

Two students follow on real Chromium phone pages. Layout is measured once the page has
settled (fonts loaded, the frame of the run's step drawn): a local wait, `settle`, below."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1280, "height": 720}
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
ROLE = "() => window.shaomai && window.shaomai.store.get('role') === '{}'"
AT_STEP = "() => document.querySelector('.lesson-panel')?.dataset.step === '{}'"
WAIT = {"timeout": 120_000}  # a deadline for a loaded 2-core machine, not a speed check


def settle(pg):
    """Fonts loaded, the frame of the run's current step drawn, then two frames."""
    pg.evaluate("() => document.fonts.ready.then(() => true)")
    pg.wait_for_function(
        "() => document.querySelector('#frame-step')?.textContent"
        " === String(window.shaomai.store.get('step'))",
        **WAIT,
    )
    pg.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def rect(pg, sel, last=False):
    return pg.evaluate(
        "([s, last]) => { const all = [...document.querySelectorAll(s)]"
        ".filter((e) => e.getClientRects().length); const e = last ? all.pop() : all[0];"
        " if (!e) return null; const r = e.getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; }",
        [sel, last],
    )


# The class tools' visible parts, each with its box: one row means one shared line.
CLASS_ROW = """() => [...document.querySelectorAll('#class-tools > *')]
  .filter((e) => e.getClientRects().length && e.getBoundingClientRect().width > 0)
  .map((e) => { const r = e.getBoundingClientRect();
    return {what: e.dataset.act || e.className, top: r.top, bottom: r.bottom, right: r.right}; })"""


def share_and_join(browser, base, teacher, n=2):
    """The teacher shares; n phones (zh and en) join. Returns the phones' contexts."""
    teacher.click("[data-act=share_class]")
    teacher.wait_for_selector(".share-overlay:not([hidden]) .qr")
    code = teacher.evaluate("() => window.shaomai.store.get('shareCode')")
    teacher.click(".share-card .close")
    ctxs = []
    for i in range(n):
        ctx = browser.new_context(**PHONE, locale="zh-CN" if i % 2 == 0 else "en-US")
        ctxs.append(ctx)
        s = ctx.new_page()
        s.goto(f"{base}/join/{code}")
        s.wait_for_function(ROLE.format("viewer"), **WAIT)
    teacher.wait_for_function(
        f"() => document.querySelector('#class-tools .connections')?.textContent.includes('{n}')",
        **WAIT,
    )
    return ctxs


def assert_one_class_row(pg):
    parts = pg.evaluate(CLASS_ROW)
    what = " ".join(p["what"] for p in parts)
    for needed in ("share_class", "fork", "connections", "class-band", "poll-ask", "keep"):
        assert needed in what, (needed, parts)
    tops = [p["top"] for p in parts]
    bottoms = [p["bottom"] for p in parts]
    # One row: every part overlaps every other vertically, and nothing leaves the screen.
    assert max(tops) < min(bottoms), parts
    assert max(p["right"] for p in parts) <= VIEWPORT["width"], parts
    controls = rect(pg, "#controls [data-act=play]")
    assert controls["bottom"] <= min(tops), (controls, parts)  # under the run's controls


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gpt_presenter_with_a_class_keeps_the_dashboard_on_screen(live_server, browser, lang):
    ctx = browser.new_context(viewport=VIEWPORT)
    pg = ctx.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    phones = []
    try:
        pg.goto(f"{live_server}/lab.html?lab=gpt&lang={lang}&present=1")
        pg.wait_for_function(ROLE.format("driver"), **WAIT)
        phones = share_and_join(browser, live_server, pg)
        pg.click("#controls [data-act=step10]")
        pg.wait_for_function("() => window.shaomai.store.get('step') === 10", **WAIT)
        settle(pg)
        assert_one_class_row(pg)
        view = rect(pg, "#view")
        assert view["bottom"] <= VIEWPORT["height"]
        assert pg.evaluate("() => document.querySelector('#view').scrollTop") == 0
        # The explanation under the maps and the info column end inside the view, unscrolled.
        for sel in (".gpt-explain", ".gpt-attn-side .readout dd"):
            r = rect(pg, sel, last=True)
            assert r is not None and r["bottom"] <= view["bottom"] + 1, (sel, r, view)
        screenshot(pg, f"presenter-class-720p-gpt-{lang}")
        assert not errors, errors
    finally:
        for c in (ctx, *phones):
            c.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_lessons_poll_and_card_keep_their_buttons_on_screen(live_server, browser, lang):
    ctx = browser.new_context(viewport=VIEWPORT)
    pg = ctx.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    phones = []
    try:
        pg.goto(f"{live_server}/lab.html?lesson=attention-forming&lang={lang}&present=1")
        pg.wait_for_function(ROLE.format("driver"), **WAIT)
        pg.wait_for_function(AT_STEP.format(0))
        phones = share_and_join(browser, live_server, pg)
        pg.keyboard.press("PageDown")
        pg.wait_for_function("() => window.shaomai.store.get('step') >= 20", **WAIT)
        pg.keyboard.press("PageDown")  # the poll, open
        pg.wait_for_selector(".poll-panel[data-open='1'] [data-act='poll.close']", **WAIT)
        settle(pg)
        assert_one_class_row(pg)
        card = rect(pg, ".lesson-panel")
        for sel in (
            "[data-act='poll.close']",
            "[data-act='poll.hide']",
            "[data-act='poll.run_it']",
        ):
            r = rect(pg, f".poll-panel {sel}")
            poll = rect(pg, ".poll-panel")
            assert r["bottom"] <= min(VIEWPORT["height"], poll["bottom"]) + 1, (sel, r, poll)
            assert r["top"] >= poll["top"], (sel, r, poll)
        for sel in ("[data-act=lesson_back]", "[data-act=lesson_next]"):
            r = rect(pg, sel)
            assert card["top"] <= r["top"] and r["bottom"] <= card["bottom"] + 1, (sel, r, card)
            assert r["bottom"] <= VIEWPORT["height"]
        # The explanation ends inside the view beside the column, unscrolled.
        view = rect(pg, "#view")
        r = rect(pg, ".gpt-explain", last=True)
        assert r["bottom"] <= view["bottom"] + 1, (r, view)
        screenshot(pg, f"presenter-class-720p-lesson-poll-{lang}")
        assert not errors, errors
    finally:
        for c in (ctx, *phones):
            c.close()


@pytest.mark.parametrize("present", [False, True])
def test_ask_the_class_stays_in_one_place_paused_or_playing(live_server, browser, present):
    size = VIEWPORT if present else {"width": 1440, "height": 900}
    ctx = browser.new_context(viewport=size)
    pg = ctx.new_page()
    try:
        pg.goto(f"{live_server}/lab.html?lab=gpt&lang=en{'&present=1' if present else ''}")
        pg.wait_for_function(ROLE.format("driver"), **WAIT)
        settle(pg)
        paused = rect(pg, "[data-act=poll-ask]")
        pg.click("#controls [data-act=play]")
        pg.wait_for_function(
            "() => window.shaomai.store.get('state') === 'playing'"
            " && window.shaomai.store.get('step') >= 5",
            **WAIT,
        )
        playing = rect(pg, "[data-act=poll-ask]")
        pg.click("#controls [data-act=play]")  # pause
        assert abs(paused["left"] - playing["left"]) <= 2, (paused, playing)
        assert abs(paused["top"] - playing["top"]) <= 2, (paused, playing)
    finally:
        ctx.close()
