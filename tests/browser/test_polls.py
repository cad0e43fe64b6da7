"""Predict, then run, in real Chromium: a teacher shares the gpt lab and asks the class; four
phones vote (one changes its mind, one taps many times); the teacher's bars count each
student once; "run it" plays, the teacher marks the right answer and the phones see it; a
numeric prediction shows the run's true value on the histogram once the run reaches the step.
"""

import pytest

from tests.browser.test_classroom_follow import PHONE, ROLE, watch
from tests.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]

WAIT = {"timeout": 60_000}  # a deadline for a loaded 2-core machine, not a speed check


def counts(page) -> list[int]:
    return page.eval_on_selector_all(".poll-bar .poll-count", "els => els.map(e => +e.textContent)")


def bars_read(page, want: list[int]) -> None:
    page.wait_for_function(
        "w => JSON.stringify([...document.querySelectorAll('.poll-bar .poll-count')]"
        ".map(e => +e.textContent)) === JSON.stringify(w)",
        arg=want,
        **WAIT,
    )


def no_overflow(page) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, f"the phone page is {width} px wide"


def test_a_class_predicts_then_runs(live_server, browser):
    tctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    kids_ctx = [
        browser.new_context(**PHONE, locale="zh-CN" if i == 0 else "en-US") for i in range(4)
    ]
    try:
        teacher = watch(tctx.new_page())
        teacher.goto(f"{live_server}/lab.html?lab=gpt&lang=en")
        teacher.wait_for_function(ROLE.format("driver"), **WAIT)
        teacher.click("[data-act=share_class]")
        teacher.wait_for_selector(".share-overlay:not([hidden]) .qr", **WAIT)
        code = teacher.evaluate("() => window.shaomai.store.get('shareCode')")
        teacher.click(".share-card .close")
        phones = [watch(c.new_page()) for c in kids_ctx]
        for p in phones:
            p.goto(f"{live_server}/join/{code}")
            p.wait_for_function(ROLE.format("viewer"), **WAIT)

        # The teacher types the question and three choices.
        teacher.click("[data-act=poll-ask]")
        teacher.fill(".poll-form [name=question]", "Which pattern will layer 0 learn for reversal?")
        for box, text in zip(
            teacher.query_selector_all(".poll-form [name=choice]"),
            ("Diagonal", "Anti-diagonal", "Uniform"),
            strict=False,
        ):
            box.fill(text)
        teacher.click(".poll-form [type=submit]")
        teacher.wait_for_selector(".poll-bar", **WAIT)
        assert counts(teacher) == [0, 0, 0]

        for p in phones:
            p.wait_for_selector(".poll-choice", **WAIT)
        phones[0].click(".poll-choice[data-choice='1']")
        for _ in range(6):  # a student tapping again and again counts once
            phones[1].click(".poll-choice[data-choice='1']")
        phones[2].click(".poll-choice[data-choice='0']")
        phones[2].click(".poll-choice[data-choice='2']")  # changed their mind
        phones[3].click(".poll-choice[data-choice='0']")
        bars_read(teacher, [1, 2, 1])
        teacher.wait_for_function(
            "() => document.querySelector('.poll-voters').textContent.includes('4')", **WAIT
        )
        pressed = phones[2].eval_on_selector_all(
            ".poll-choice", "els => els.map(e => e.getAttribute('aria-pressed'))"
        )
        assert pressed == ["false", "false", "true"]  # their own vote, highlighted
        no_overflow(phones[0])
        screenshot(phones[0], "polls-student-zh-phone")
        screenshot(teacher, "polls-teacher-en-bars")

        # Run it: voting closes, the lab plays; the teacher marks the right answer.
        teacher.click("[data-act='poll.run_it']")
        teacher.wait_for_function("() => window.shaomai.store.get('step') >= 3", **WAIT)
        teacher.click("[data-act=play]")  # the play button pauses
        teacher.click(".poll-bar[data-choice='1'] .poll-label")
        teacher.wait_for_selector(".poll-bar[data-choice='1'][data-correct='1']", **WAIT)
        for p in phones:
            # Closed, a phone shows one line; the bars are behind a tap (polls.js closedLine).
            p.wait_for_selector(
                ".poll-sum .poll-bar[data-choice='1'][data-correct='1']", state="attached", **WAIT
            )
            assert p.locator(".poll-choice").count() == 0  # closed: no more votes
        bars_read(teacher, [1, 2, 1])
        screenshot(teacher, "polls-teacher-en-marked")

        # A numeric prediction: reset, ask for the loss at step 5, three guesses, run it.
        teacher.click("[data-act=reset]")
        teacher.wait_for_function("() => window.shaomai.store.get('step') === 0", **WAIT)
        teacher.click("[data-act=poll-ask]")
        teacher.check(".poll-form [name=kind][value=numeric]")
        teacher.select_option(".poll-form [name=metric]", "loss")
        teacher.fill(".poll-form [name=step]", "5")
        teacher.click(".poll-form [type=submit]")
        teacher.wait_for_selector(".poll-panel[data-kind=numeric]", **WAIT)
        for p, guess in zip(phones, ("3.5", "4.2", "5"), strict=False):
            p.wait_for_selector(".poll-guess input:not([disabled])", **WAIT)
            p.fill(".poll-guess input", guess)
            p.click(".poll-guess button")
        teacher.wait_for_function(
            "() => document.querySelector('.poll-voters').textContent.includes('3')", **WAIT
        )
        screenshot(teacher, "polls-teacher-en-guesses")
        teacher.click("[data-act='poll.run_it']")
        teacher.wait_for_selector(".poll-truth-text", **WAIT)
        teacher.wait_for_selector(".poll-truth", **WAIT)
        teacher.click("[data-act=play]")  # the play button pauses
        total = teacher.eval_on_selector_all(
            ".poll-col .poll-count", "els => els.reduce((s, e) => s + (+e.textContent || 0), 0)"
        )
        assert total == 3
        phones[0].wait_for_selector(".poll-sum .poll-truth-text", state="attached", **WAIT)
        no_overflow(phones[0])
        screenshot(teacher, "polls-teacher-en-numeric")
        screenshot(phones[0], "polls-student-zh-numeric")
        for p in (teacher, *phones):
            assert not p.errors, p.errors
    finally:
        tctx.close()
        for c in kids_ctx:
            c.close()


ASK = "q => window.shaomai.client.send(q)"  # what a lesson's poll step sends (lesson.js)
ALONE = ".poll-panel[data-mode=alone]"


def test_a_learner_alone_predicts_then_runs(live_server, browser):
    """Nobody joined: no bars of nobody; the learner picks, runs it, and sees their own pick
    beside the answer. Once they share the session, the teacher's bars come back."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    try:
        pg = watch(ctx.new_page())
        pg.goto(f"{live_server}/lab.html?lab=linear-regression&lang=en")
        pg.wait_for_function(ROLE.format("driver"), **WAIT)
        question = {"type": "poll", "question": "Where does the loss go with lr 0.1?"}
        pg.evaluate(ASK, {**question, "choices": ["Up", "Down", "Nowhere"], "answer": 1})
        pg.wait_for_selector(f"{ALONE} .poll-choice", **WAIT)
        assert pg.locator(".poll-bar, .poll-voters, [data-act='poll.close']").count() == 0
        pg.click(".poll-choice[data-choice='1']")
        pg.click(".poll-choice[data-choice='0']")  # changed their mind: their pick is "Up"
        pressed = pg.eval_on_selector_all(
            ".poll-choice", "els => els.map(e => e.getAttribute('aria-pressed'))"
        )
        assert pressed == ["true", "false", "false"]
        screenshot(pg, "polls-alone-en-before")

        pg.click(f"{ALONE} [data-act='poll.run_it']")  # closes the poll and plays the lab
        pg.wait_for_selector(f"{ALONE}:not([data-open='1']) .poll-verdict", **WAIT)
        pg.wait_for_function("() => window.shaomai.store.get('step') >= 3", **WAIT)
        pg.click("[data-act=play]")  # the play button pauses
        assert pg.inner_text(".poll-verdict") == "You picked “Up”; the answer is “Down”."
        assert pg.get_attribute(".poll-choice[data-choice='1']", "data-correct") == "1"
        assert "your pick" in pg.inner_text(".poll-choice[data-choice='0']")
        assert pg.is_disabled(".poll-choice[data-choice='2']")  # closed: no more votes
        screenshot(pg, "polls-alone-en-after")

        # Shared: a class is watching, so the teacher's bars are back (with the one vote).
        pg.click("[data-act=share_class]")
        pg.wait_for_selector(".share-overlay:not([hidden]) .qr", **WAIT)
        pg.click(".share-card .close")
        pg.wait_for_selector(".poll-panel[data-mode=teacher] .poll-bar", **WAIT)
        assert counts(pg) == [1, 0, 0]
        assert not pg.errors, pg.errors
    finally:
        ctx.close()


def test_a_learner_alone_guesses_a_number_on_a_phone_in_zh(live_server, browser):
    ctx = browser.new_context(**PHONE, locale="zh-CN")
    try:
        pg = watch(ctx.new_page())
        pg.goto(f"{live_server}/lab.html?lab=linear-regression&lang=zh")
        pg.wait_for_function(ROLE.format("driver"), **WAIT)
        numeric = {"metric": "loss", "step": 5}
        pg.evaluate(ASK, {"type": "poll", "question": "第 5 步的损失？", "numeric": numeric})
        pg.wait_for_selector(f"{ALONE} .poll-guess input:not([disabled])", **WAIT)
        assert "先填上你的预测" in pg.inner_text(ALONE)
        pg.fill(".poll-guess input", "0.25")  # typed, not sent: Run it sends it first
        no_overflow(pg)
        screenshot(pg, "polls-alone-zh-phone-before")
        pg.click(f"{ALONE} [data-act='poll.run_it']")
        pg.wait_for_selector(f"{ALONE} .poll-truth-text", **WAIT)
        truth = pg.inner_text(".poll-truth-text")
        assert "第 5 步" in truth and pg.inner_text(".poll-mine") == "你的预测：0.25"
        assert "相差" in pg.inner_text(".poll-verdict")
        no_overflow(pg)
        screenshot(pg, "polls-alone-zh-phone-after")
        assert not pg.errors, pg.errors
    finally:
        ctx.close()
