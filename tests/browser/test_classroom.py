"""A teacher and a student in two Chromium contexts against one real server."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') !== null"


def new_page(browser, **kw):
    ctx = browser.new_context(viewport=kw.pop("viewport", {"width": 1400, "height": 1000}), **kw)
    page = ctx.new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    return ctx, page


def loss_steps(page):
    return page.evaluate("() => document.querySelector('.panel .chart').data[0].x")


def test_teacher_shares_student_follows_forks_and_rejoins(live_server, browser):
    tctx, teacher = new_page(browser)
    sctx, student = new_page(browser)
    try:
        teacher.goto(f"{live_server}/lab.html?lab=linear-regression&lang=en")
        teacher.wait_for_function(READY)
        teacher.click("[data-act=share_class]")
        teacher.wait_for_selector(".share-overlay:not([hidden]) .qr")
        code = teacher.evaluate("() => window.shaomai.store.get('shareCode')")
        assert len(code) == 6
        teacher.wait_for_function(
            "() => document.querySelector('.share-card .qr').naturalWidth > 0"
        )
        screenshot(teacher, "classroom-share")
        teacher.click(".share-card .close")

        # The student opens the join link (what the QR code holds).
        student.goto(f"{live_server}/join/{code}")
        student.wait_for_function(
            "() => window.shaomai && window.shaomai.store.get('role') === 'viewer'"
        )
        assert "read-only" in student.inner_text("#role")
        assert student.is_disabled("[data-act=step]")
        teacher.wait_for_function(
            "() => document.querySelector('.connections').textContent.includes('1')"
        )

        # The teacher steps and hovers item 3: the student follows.
        teacher.click("[data-act=step10]")
        student.wait_for_function("() => window.shaomai.store.get('step') === 10")
        # linear-regression has the generic view keys (gpt adds layer and head).
        teacher.evaluate("() => window.shaomai.store.set('hoverToken', 3)")
        student.wait_for_function("() => window.shaomai.store.get('hoverToken') === 3")
        # Presenter mode follows the teacher too.
        teacher.keyboard.press("p")
        student.wait_for_function("() => document.body.classList.contains('present')")
        teacher.keyboard.press("p")
        student.wait_for_function("() => !document.body.classList.contains('present')")

        # The student's attempt to step is refused by the server.
        student.evaluate("() => window.shaomai.client.control('step', {count: 1})")
        student.wait_for_function(
            "() => document.querySelector('#toast').textContent.includes('Viewers only watch')"
        )

        # A dropped connection rejoins; the loss curve has no gap and no duplicate.
        student.evaluate("() => window.shaomai.client.ws.close()")
        teacher.click("[data-act=step10]")
        student.wait_for_function("() => window.shaomai.store.get('step') === 20")
        student.wait_for_function(
            "() => document.querySelector('.panel .chart').data[0].x.length === 21"
        )
        assert loss_steps(student) == list(range(21))

        # The student forks and trains alone; the teacher's step count stays put.
        student.click("[data-act=fork]")
        student.wait_for_function("() => window.shaomai.store.get('role') === 'driver'")
        student.click("[data-act=step10]")
        student.wait_for_function("() => window.shaomai.store.get('step') === 30")
        student.wait_for_function(  # charts redraw within a budget, after the step shows
            "() => document.querySelector('.panel .chart').data[0].x.length === 31"
        )
        assert loss_steps(student) == list(range(31))
        teacher.wait_for_timeout(300)
        assert teacher.evaluate("() => window.shaomai.store.get('step')") == 20
        assert not teacher.errors and not student.errors, (teacher.errors, student.errors)
    finally:
        tctx.close()
        sctx.close()


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_presenter_mode_fits_a_16_9_screen(live_server, browser, size):
    w, h = size
    ctx, page = new_page(browser, viewport={"width": w, "height": h})
    try:
        page.goto(f"{live_server}/lab.html?lab=linear-regression&lang=zh&present=1")
        page.wait_for_function(READY)
        page.keyboard.press("PageDown")
        page.wait_for_function("() => window.shaomai.store.get('step') === 1")
        page.keyboard.press(".")
        page.wait_for_function("() => window.shaomai.store.get('step') > 20")
        page.keyboard.press(".")
        page.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
        page.keyboard.press("PageUp")  # back one recorded step
        page.wait_for_function(
            "() => window.shaomai.store.get('shownStep') < window.shaomai.store.get('step')"
        )
        assert page.evaluate("() => document.documentElement.scrollHeight") <= h
        assert page.evaluate("() => document.documentElement.scrollWidth") <= w
        screenshot(page, f"presenter-{w}x{h}")
        page.keyboard.press("b")
        assert page.is_visible(".blank-screen")
        page.keyboard.press("b")
        assert not page.errors, page.errors
    finally:
        ctx.close()
