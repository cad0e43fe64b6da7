"""A phone following a class is sent a frame's meta only when it changed (docs/streams.md);
it still draws what the teacher's page draws: the next-token candidates and the model's
facts, frame after frame, and again after a reload."""

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.shared_class import ROLE, gpt_class

pytestmark = pytest.mark.browser

SIDE = "() => document.querySelector('.gpt-attn-side').innerText"
STEP = "() => window.shaomai.store.get('step')"
RESID = "() => document.querySelector('.gpt-resid').innerText"


def _same_side(teacher, student):
    """The phone's next-token panel and facts once it shows the teacher's step."""
    at = teacher.evaluate(STEP)
    # Both pages have drawn that step's frame (a step arrives with its scalars, before the
    # frame is drawn: the teacher's panel read earlier can still show the step before).
    drawn = f"() => window.shaomai.store.get('shownStep') === {at}"
    teacher.wait_for_function(drawn)
    student.wait_for_function(drawn)
    want = teacher.evaluate(SIDE)
    student.wait_for_function(
        "(want) => document.querySelector('.gpt-attn-side').innerText === want", arg=want
    )
    return want


def _same_resid(teacher, student):
    """Both residual panels once they agree and show the teacher's step (the bars redraw at
    most every 150 ms, so either can still show the step before when its frame is drawn)."""
    drawn = "(at) => document.querySelector('.gpt-resid').dataset.drawn?.startsWith(`${at}:`)"
    at = teacher.evaluate(STEP)
    teacher.wait_for_function(drawn, arg=at)
    student.wait_for_function(drawn, arg=at)
    for _ in range(50):
        want = teacher.evaluate(RESID)
        try:
            student.wait_for_function(f"(want) => ({RESID})() === want", arg=want, timeout=500)
            return want
        except PlaywrightTimeout:
            continue
    raise AssertionError(
        f"the phone's residual panel {student.evaluate(RESID)!r} never read {want!r}"
    )


def test_a_phone_sent_meta_only_when_it_changed_draws_what_the_teacher_draws(live_server, browser):
    with gpt_class(live_server, browser) as (teacher, student, code, errors):
        student.goto(f"{live_server}/join/{code}?lang=en")
        student.wait_for_function(ROLE.format("viewer"))
        student.wait_for_function(
            "() => { const s = window.shaomai.client.subscription; return s && s.layer === 0; }"
        )
        sides = []
        for _ in range(3):
            teacher.click("[data-act=step10]")
            teacher.wait_for_function(
                "(s) => window.shaomai.store.get('step') >= s", arg=(len(sides) + 1) * 10
            )
            sides.append(_same_side(teacher, student))
        # The phone's frames were cut and carried only the changed meta.
        sl = student.evaluate("() => window.shaomai.client.received.slice")
        assert sl and sl["layer"] == 0, sl
        assert len(set(sides)) == 3 and "Step" in sides[-1], sides  # it moved, and it is drawn
        # Nothing hovered: the teacher's residual panel is the mean over tokens; the phone,
        # sent one token's column, shows that token (the next-token panel's), never zeros.
        at = student.evaluate("() => window.shaomai.client.subscription.position")
        student.wait_for_function(f"() => ({RESID})().includes('(position {at})')")
        assert "(position" not in teacher.evaluate(RESID)
        # The teacher points at a token: the phone, sent that token's column of the residual
        # norms (and its scalars as their row), draws the teacher's residual panel.
        teacher.evaluate("() => window.shaomai.store.set('hoverToken', 3)")
        student.wait_for_function("() => window.shaomai.client.subscription.position === 3")
        teacher.click("[data-act=step10]")
        teacher.wait_for_function("() => window.shaomai.store.get('step') >= 40")
        sides.append(_same_side(teacher, student))
        resid = _same_resid(teacher, student)
        assert "(position 3)" in resid, resid  # the token's panel, not the mean
        # Its scalars came as that step's row (a text before the frame, or in the frame).
        assert student.evaluate(
            "() => [...window.shaomai.client.rows.keys()].some((k) => k.endsWith(':40'))"
        )
        # A reload: a new connection, whole meta first, the same drawing.
        student.reload()
        student.wait_for_function(ROLE.format("viewer"))
        assert _same_side(teacher, student) == sides[-1]
        assert _same_resid(teacher, student) == resid
        teacher.click("[data-act=step10]")
        teacher.wait_for_function("() => window.shaomai.store.get('step') >= 50")
        _same_side(teacher, student)
        assert not errors, errors


def test_a_phone_keeps_its_slice_while_a_row_is_ahead_of_the_drawn_frame(live_server, browser):
    """A step's row can arrive before the frame a slow phone is drawing (a step without a
    frame: low bandwidth, or more steps than frames a second). The phone stays on its slice
    then; only the scrubber's past step asks for everything (it used to flip to whole
    frames, ~200 KB each on the 6 × 8 model, whenever the shown step was behind)."""
    with gpt_class(live_server, browser) as (teacher, student, code, errors):
        student.goto(f"{live_server}/join/{code}?lang=en")
        student.wait_for_function(ROLE.format("viewer"))
        sliced = (
            "() => { const s = window.shaomai.client.subscription; return s && s.layer === 0; }"
        )
        student.wait_for_function(sliced)
        # (its first frame, which comes after that subscription, drawn)
        student.wait_for_function("() => Number.isInteger(window.shaomai.store.get('shownStep'))")
        # A row of the next step arrives (the store's step moves on), then something makes
        # the page resubscribe before that step's frame is drawn: here a hovered token.
        student.evaluate(
            "() => { const st = window.shaomai.store; st.set('step', st.get('shownStep') + 1);"
            " st.set('hoverToken', 2); }"
        )
        sub = student.evaluate("() => window.shaomai.client.subscription")
        assert sub["layer"] == 0 and sub["position"] == 2, sub
        # The next frames still come cut to layer 0.
        teacher.click("[data-act=step10]")
        student.wait_for_function("() => window.shaomai.store.get('shownStep') >= 10")
        assert student.evaluate("() => window.shaomai.client.received.slice.layer") == 0
        assert not errors, errors


def test_a_phone_joining_a_playing_class_is_never_sent_a_whole_frame(live_server, browser):
    """The phone's page joins with `wait=subscribe` (gpt's catalog entry says its page
    subscribes on a phone): its first frame is already the class's head, cut; before this,
    2-3 whole frames (~200 KB each on the 6 × 8 model) came before its view subscribed."""
    with gpt_class(live_server, browser, "zh-CN") as (teacher, student, code, errors):
        urls = []
        student.on("websocket", lambda ws: urls.append(ws.url))
        teacher.evaluate(
            "() => { window.shaomai.store.set('layer', 1); window.shaomai.store.set('head', 2); }"
        )
        teacher.click("[data-act=play]")
        teacher.wait_for_function("() => window.shaomai.store.get('step') >= 5")
        student.goto(f"{live_server}/join/{code}")
        student.wait_for_function(ROLE.format("viewer"))
        student.wait_for_function("() => window.shaomai.client.received.frames >= 3")
        first = student.evaluate("() => window.shaomai.client.received.firstSlice")
        assert first and first["layer"] == 1 and first["head"] == 2, first
        assert urls and urls[0].endswith("&wait=subscribe"), urls
        student.wait_for_function("() => !document.querySelector('.attn-zoom').hidden")
        teacher.click("[data-act=play]")  # pause
        assert not errors, errors
