"""A phone in a lesson and on its own (the walkthrough's M6, m5, m6): a student following a
teacher's lesson sees the picture being run on the first screen (the lesson text folds once
read, the closed poll is one line, the dock holds no disabled buttons); a driver's dock is two
rows at most and its boxes are thumb-sized; a lab with nothing to play has no dock.

Layout is measured once the page has settled (fonts loaded, the view's frame for the run's
step drawn): a local wait, `settle`, below."""

import pytest

from tests.conftest import ARTIFACTS, screenshot

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
ROLE = "() => window.shaomai && window.shaomai.store.get('role') === '{}'"
AT_STEP = "() => document.querySelector('.lesson-panel')?.dataset.step === '{}'"
WAIT = {"timeout": 120_000}  # a deadline for a loaded 2-core machine, not a speed check
LOCALE = {"en": "en-US", "zh": "zh-CN"}


def settle(pg, frame=True):
    """Fonts loaded and (frame) the frame of the run's current step drawn, then two frames."""
    pg.evaluate("() => document.fonts.ready.then(() => true)")
    if frame:
        pg.wait_for_function(
            "() => document.querySelector('#frame-step')?.textContent"
            " === String(window.shaomai.store.get('step'))",
            **WAIT,
        )
    pg.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


# The dock's visible controls grouped into rows (boxes overlapping vertically share a row).
DOCK_ROWS = """() => {
  const dock = document.querySelector('.dock');
  const parts = [...dock.querySelectorAll('button, select, input, .state, output, .no-play')]
    .filter((e) => e.getClientRects().length && e.getBoundingClientRect().height > 0)
    .map((e) => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; })
    .sort((a, b) => a[0] - b[0]);
  const rows = [];
  for (const [top, bottom] of parts) {
    const last = rows[rows.length - 1];
    if (last && top < last[1] - 4) last[1] = Math.max(last[1], bottom);
    else rows.push([top, bottom]);
  }
  const d = dock.getBoundingClientRect();
  return {rows: rows.length, height: d.height, top: d.top,
          disabled: [...dock.querySelectorAll('button:disabled, select:disabled')]
            .filter((e) => e.getClientRects().length).map((e) => e.dataset.act || e.textContent)};
}"""


def box(pg, sel):
    return pg.evaluate(
        "(s) => { const e = document.querySelector(s); if (!e || !e.getClientRects().length)"
        " return null; const r = e.getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom, height: r.height}; }",
        sel,
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_followers_phone_shows_the_picture_being_run(live_server, browser, lang):
    """The teacher shares attention-forming and runs its poll; on the student's 390 × 844
    phone the attention maps the run trains are on the first screen, above the dock."""
    tctx = browser.new_context(viewport={"width": 1280, "height": 720}, locale="en-US")
    sctx = browser.new_context(**PHONE, locale=LOCALE[lang])
    teacher, phone = tctx.new_page(), sctx.new_page()
    errors = []
    for pg in (teacher, phone):
        pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        teacher.goto(f"{live_server}/lab.html?lesson=attention-forming&lang=en&present=1")
        teacher.wait_for_function(ROLE.format("driver"))
        teacher.wait_for_function(AT_STEP.format(0))
        teacher.click("[data-act=share_class]")
        teacher.wait_for_selector(".share-overlay:not([hidden]) .qr")
        code = teacher.evaluate("() => window.shaomai.store.get('shareCode')")
        teacher.click(".share-card .close")
        phone.goto(f"{live_server}/join/{code}")
        phone.wait_for_function(ROLE.format("viewer"))
        teacher.keyboard.press("PageDown")
        teacher.wait_for_function("() => window.shaomai.store.get('step') >= 20", **WAIT)
        teacher.keyboard.press("PageDown")  # the poll
        phone.wait_for_function(AT_STEP.format(2), **WAIT)
        phone.wait_for_selector(".poll-panel:not([hidden]) .poll-choice", **WAIT)
        # A class is told to vote on their phones (a learner alone is not: test_lesson_flow).
        assert ("请用手机投票" if lang == "zh" else "Vote on your phone") in phone.inner_text(
            ".lesson-panel"
        )
        phone.click(".poll-choice[data-choice='1']")
        teacher.wait_for_function(
            "() => document.querySelector('.poll-voters')?.textContent.includes('1')", **WAIT
        )
        teacher.click(".poll-panel [data-act='poll.run_it']")
        # The walkthrough's steps: Run it, the run stops (solved, or the lab's end), then Next.
        teacher.wait_for_function(
            "() => ['paused', 'done'].includes(window.shaomai.store.get('state'))"
            " && window.shaomai.store.get('step') > 20",
            **WAIT,
        )
        # Read once the run moved: the lesson's text is one line on the phone now.
        phone.wait_for_function(
            "() => document.querySelector('.lesson-panel')?.dataset.folded === '1'", **WAIT
        )
        teacher.keyboard.press("PageDown")
        k = teacher.evaluate("() => document.querySelector('.lesson-panel').dataset.step")
        assert int(k) >= 3
        phone.wait_for_function(AT_STEP.format(k), **WAIT)
        phone.wait_for_selector(".poll-panel:not([hidden])", **WAIT)
        phone.wait_for_function(
            "() => window.shaomai.store.get('step') === "
            + str(teacher.evaluate("() => window.shaomai.store.get('step')")),
            **WAIT,
        )
        settle(phone)
        dock = phone.evaluate(DOCK_ROWS)
        grid = box(phone, "#view .map-grid")
        assert grid is not None
        # The picture intersects the first screen above the sticky dock.
        assert grid["top"] < dock["top"] - 40, (grid, dock)
        # The closed poll is one line ("you picked X · answer Y").
        assert box(phone, ".poll-panel")["height"] < 80
        line = phone.inner_text(".poll-panel summary")
        assert ("你选了" if lang == "zh" else "you picked") in line and "·" in line, line
        # No disabled buttons in the follower's dock: one row (the state and the timeline).
        assert dock["disabled"] == [], dock
        assert dock["rows"] <= 1, dock
        screenshot(phone, f"follower-phone-{lang}-after-run")
        phone.screenshot(path=str(ARTIFACTS / f"follower-phone-{lang}-first-screen.png"))
        # The new step's text is unread: its first lines; a tap shows it all, another folds it.
        assert phone.get_attribute(".lesson-panel", "data-folded") == "clamp"
        phone.click("[data-act=lesson_fold]")
        assert phone.get_attribute(".lesson-panel", "data-folded") == ""
        phone.click("[data-act=lesson_fold]")
        assert phone.get_attribute(".lesson-panel", "data-folded") == "1"
        assert box(phone, ".lesson-panel")["height"] < 80
        assert not errors, errors
    finally:
        tctx.close()
        sctx.close()


# Boxes a thumb taps, on a phone: their height; a checkbox's size.
SMALL_INPUTS = """() => [...document.querySelectorAll('input, select')]
  .filter((e) => e.getClientRects().length && !['range', 'hidden', 'checkbox', 'radio'].includes(e.type))
  .map((e) => [e.name || e.className || e.type, e.getBoundingClientRect().height])
  .filter(([, h]) => h < 40)"""
CHECKBOXES = """() => [...document.querySelectorAll('input[type=checkbox]')]
  .filter((e) => e.getClientRects().length)
  .map((e) => { const r = e.getBoundingClientRect(); return [e.name, r.width, r.height]; })"""


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("lab", ["gpt", "optimizers", "real-llm"])
def test_a_phones_dock_is_two_rows_and_its_boxes_are_thumb_sized(live_server, browser, lab, lang):
    ctx = browser.new_context(**PHONE, locale=LOCALE[lang])
    pg = ctx.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        pg.goto(f"{live_server}/lab.html?lab={lab}&lang={lang}")
        pg.wait_for_function(ROLE.format("driver"), **WAIT)
        pg.evaluate("() => { document.querySelector('#params-box').open = true; }")
        settle(pg, frame=lab != "real-llm")
        dock = pg.evaluate(DOCK_ROWS)
        if lab != "real-llm":
            assert 1 <= dock["rows"] <= 2, dock
            assert dock["height"] <= 130, dock
        assert pg.evaluate(SMALL_INPUTS) == []
        for name, w, h in pg.evaluate(CHECKBOXES):
            assert 40 <= h <= 48 and w <= 48, (name, w, h)
        assert not errors, errors
    finally:
        ctx.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("lab", ["real-bert", "real-llm"])
def test_a_lab_with_nothing_to_play_has_no_dock(live_server, browser, lab, lang):
    """No Reset, no "Paused · step 0", no timeline: on a phone nothing sticks to the bottom;
    on a desktop the line "nothing to play" alone. The try-next hint asks for no play."""
    for ctx_args in (PHONE, {"viewport": {"width": 1440, "height": 900}}):
        ctx = browser.new_context(**ctx_args, locale=LOCALE[lang])
        pg = ctx.new_page()
        try:
            pg.goto(f"{live_server}/lab.html?lab={lab}&lang={lang}")
            pg.wait_for_function(ROLE.format("driver"), **WAIT)
            settle(pg, frame=False)
            seen = pg.evaluate(
                "() => [...document.querySelectorAll('#controls :is(button, select, .state),"
                " .timeline-row :is(input, output, button)')].filter((e) => e.getClientRects().length)"
                ".map((e) => e.dataset.act || e.className)"
            )
            assert seen == [], seen
            phone = ctx_args is PHONE
            dock = box(pg, ".dock")
            assert dock is None or dock["height"] < (1 if phone else 60), dock
            hint = pg.evaluate("() => document.querySelector('.try-next-watch')?.textContent || ''")
            assert "play" not in hint and "播放" not in hint, hint
            if phone:
                screenshot(pg, f"no-play-{lab}-{lang}-phone")
        finally:
            ctx.close()
