"""A lesson's poll and run, as a learner and a teacher meet them (the walkthrough's m3, m4):
"Run it" runs the lesson's next step to its target (until solved), not the lab to its end;
the answer is marked once the run has reached that target, not the moment voting closes;
a step's run after its poll waits for "Run it"; "Vote on your phone" is said to a class
only; the teacher opening a lesson from the catalog stays in presenter mode."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
ROLE = "() => window.shaomai && window.shaomai.store.get('role') === '{}'"
AT_STEP = "() => document.querySelector('.lesson-panel')?.dataset.step === '{}'"
WAIT = {"timeout": 120_000}  # a deadline for a loaded 2-core machine, not a speed check
PAUSED_AFTER = (
    "() => window.shaomai.store.get('state') === 'paused' && window.shaomai.store.get('step') > {}"
)

# Every poll_state the page receives, with the page's step and run state when it came.
RECORD_POLLS = """() => {
  window.pollLog = [];
  window.shaomai.client.on('poll_state', (m) => window.pollLog.push({
    open: m.open, answer: m.answer ?? null,
    step: window.shaomai.store.get('step'), state: window.shaomai.store.get('state')}));
}"""


def watch(page):
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    return page


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_run_it_trains_to_the_lessons_target_then_marks_the_answer(live_server, browser, lang):
    """Alone on a phone: the poll step's "Run it" moves to "Run until solved" and stops when
    solved (step 38 for seed 0), well before the lab's 300; the answer is marked only then."""
    ctx = browser.new_context(**PHONE, locale="zh-CN" if lang == "zh" else "en-US")
    pg = watch(ctx.new_page())
    try:
        pg.goto(f"{live_server}/lab.html?lesson=attention-forming&lang={lang}")
        pg.wait_for_function(ROLE.format("driver"))
        pg.wait_for_function(AT_STEP.format(0))
        pg.click("[data-act=lesson_next]")
        pg.wait_for_function("() => window.shaomai.store.get('step') >= 20", **WAIT)
        pg.click("[data-act=lesson_next]")
        pg.wait_for_function(AT_STEP.format(2))
        pg.evaluate(RECORD_POLLS)
        # A learner alone is not told to vote on a phone (a class is).
        text = pg.inner_text(".lesson-panel")
        assert "Vote on your phone" not in text and "手机" not in text, text
        pg.click(".poll-panel[data-mode=alone] .poll-choice[data-choice='1']")
        pg.click(".poll-panel[data-mode=alone] [data-act='poll.run_it']")
        # Run it is the lesson's next step: train until solved, then pause there.
        pg.wait_for_function(AT_STEP.format(3), **WAIT)
        pg.wait_for_function(PAUSED_AFTER.format(20), **WAIT)
        pg.wait_for_selector(".poll-panel [data-choice='1'][data-correct='1']", **WAIT)
        step = pg.evaluate("() => window.shaomai.store.get('step')")
        assert step < 300, f"Run it trained to the lab's end ({step}), past the lesson's target"
        log = pg.evaluate("() => window.pollLog")
        closed = [m for m in log if not m["open"]]
        assert closed, log
        # Voting closed with no answer on it; the answer came once the run had gone on.
        assert closed[0]["answer"] is None, f"answer marked as voting closed: {log}"
        marked = [m for m in log if m["answer"] is not None]
        assert marked and marked[0]["step"] > 20, log
        assert ("猜对了" if lang == "zh" else "You predicted it") in pg.inner_text(".poll-verdict")
        screenshot(pg, f"lesson-flow-run-it-{lang}-phone")
        assert not pg.errors, pg.errors
    finally:
        ctx.close()


def test_a_steps_run_after_its_poll_waits_for_run_it(live_server, browser):
    """gradient-descent's "Too large a step" opens lr 0.6, asks, then plays to 60: the run
    starts on "Run it" (predict, then run), not while the class is still voting."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    pg = watch(ctx.new_page())
    try:
        pg.goto(f"{live_server}/lab.html?lab=linear-regression&lesson=gradient-descent&lang=en")
        pg.wait_for_function(ROLE.format("driver"))
        pg.wait_for_function(AT_STEP.format(0))
        for k in (1, 2):
            pg.click("[data-act=lesson_next]")
            pg.wait_for_function(AT_STEP.format(k))
        pg.wait_for_function("() => window.shaomai.store.get('step') === 100", **WAIT)
        pg.click("[data-act=lesson_next]")  # lr 0.6: reset, the poll, then (on Run it) 60 steps
        pg.wait_for_function(AT_STEP.format(3))
        pg.wait_for_function("() => window.shaomai.store.get('params').lr === 0.6", **WAIT)
        pg.wait_for_selector(".poll-panel[data-mode=alone][data-open='1']", **WAIT)
        # The reset has come back (step 0) and nothing has been asked to train since.
        pg.wait_for_function("() => window.shaomai.store.get('step') === 0", **WAIT)
        pg.evaluate("() => new Promise((r) => setTimeout(r, 1500))")  # room for a stray run
        assert pg.evaluate("() => window.shaomai.store.get('step')") == 0
        pg.click(".poll-panel[data-mode=alone] .poll-choice[data-choice='0']")
        pg.click(".poll-panel[data-mode=alone] [data-act='poll.run_it']")
        pg.wait_for_function(
            "() => window.shaomai.store.get('step') >= 60"
            " || window.shaomai.store.get('state') === 'diverged'",
            **WAIT,
        )
        assert panel_step(pg) == "3"  # the run was this step's own, not the next step's
        assert not pg.errors, pg.errors
    finally:
        ctx.close()


def panel_step(pg):
    return pg.evaluate("() => document.querySelector('.lesson-panel').dataset.step")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_catalog_keeps_presenter_mode_for_the_lesson_it_opens(live_server, browser, lang):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    pg = watch(ctx.new_page())
    try:
        pg.goto(f"{live_server}/lab.html?lab=gpt&lang={lang}&present=1")
        pg.wait_for_function("() => document.body.classList.contains('present')")
        pg.click(".top .home")
        pg.wait_for_selector(".lesson-card[data-lesson=attention-forming]")
        href = pg.get_attribute(".lesson-card[data-lesson=attention-forming]", "href")
        assert "present=1" in href, href
        assert "present=1" in pg.get_attribute(".card[data-lab=gpt]", "href")
        pg.click(".lesson-card[data-lesson=attention-forming]")
        pg.wait_for_function(AT_STEP.format(0), **WAIT)
        assert pg.evaluate("() => document.body.classList.contains('present')")
        assert not pg.errors, pg.errors
    finally:
        ctx.close()
