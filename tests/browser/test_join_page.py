"""Somewhere to type a code (issue 12), in Chromium: the catalog's code field lands a
student in the teacher's class; a wrong code answers a sentence in zh/en with the field
again; the join page at desktop and phone sizes (screenshots in tests/artifacts/)."""

import re

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') !== null"
PHONE = {"width": 390, "height": 844}


def new_page(browser, viewport=None, locale="en-US"):
    ctx = browser.new_context(viewport=viewport or {"width": 1280, "height": 800}, locale=locale)
    page = ctx.new_page()
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    return ctx, page


def no_overflow(page):
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"page is {width} px wide"


def test_type_the_code_on_the_catalog_and_land_in_the_class(live_server, browser):
    tctx, teacher = new_page(browser)
    sctx, student = new_page(browser, PHONE)
    try:
        teacher.goto(f"{live_server}/lab.html?lab=linear-regression&lang=en")
        teacher.wait_for_function(READY)
        teacher.click("[data-act=share_class]")
        teacher.wait_for_selector(".share-overlay:not([hidden]) .qr")
        code = teacher.evaluate("() => window.shaomai.store.get('shareCode')")
        student.goto(f"{live_server}/?lang=en")
        student.wait_for_selector("#join-code")
        no_overflow(student)
        student.fill("#join-code", f"{code[:3].lower()} {code[3:].lower()}")  # by hand
        student.click("#join-form button[type=submit]")
        student.wait_for_function(READY)
        assert student.evaluate("() => window.shaomai.store.get('role')") == "viewer"
        assert f"join={code}" in student.url or student.evaluate(
            "() => window.shaomai.store.get('session')"
        )
        assert not student.errors and not teacher.errors, (student.errors, teacher.errors)
    finally:
        tctx.close()
        sctx.close()


@pytest.mark.parametrize(
    ("lang", "sentence", "title"),
    [
        ("en", "No class has the code ZZZZZZ", "Join a class"),
        ("zh", "没有课堂码为 ZZZZZZ 的课堂", "加入课堂"),
    ],
)
def test_a_wrong_code_is_a_sentence_in_the_pages_language(
    live_server, browser, lang, sentence, title
):
    ctx, page = new_page(browser, locale="zh-CN" if lang == "zh" else "en-US")
    try:
        page.goto(f"{live_server}/?lang={lang}")
        page.wait_for_selector(".card")  # rendered, in its language
        assert page.get_attribute("#join-code", "aria-describedby") == "join-hint"
        screenshot(page, f"join-catalog-{lang}-desktop")
        page.fill("#join-code", "zzzzzz")
        page.click("#join-form button[type=submit]")
        page.wait_for_selector(".problem")
        assert sentence in page.inner_text(".problem")
        assert page.inner_text("h1") == title
        assert page.input_value("#join-code") == "ZZZZZZ"  # the field again, with the code
        assert "detail" not in page.content()
        screenshot(page, f"join-wrong-{lang}-desktop")
        # The same page straight from a bad link, on a phone.
        page.set_viewport_size(PHONE)
        page.goto(f"{live_server}/join/BADCOD?lang={lang}")
        page.wait_for_selector(".problem")
        no_overflow(page)
        box = page.locator("#join-code").bounding_box()
        assert box["height"] >= 44 and box["width"] >= 150
        screenshot(page, f"join-wrong-{lang}-phone")
        page.goto(f"{live_server}/join")  # the language from the browser
        assert page.inner_text("h1") == title
        screenshot(page, f"join-page-{lang}-phone")
        page.goto(f"{live_server}/?lang={lang}")
        page.wait_for_selector(".card")
        no_overflow(page)
        screenshot(page, f"join-catalog-{lang}-phone")
        # Only the two wrong-code pages themselves (answered 404, as they should be).
        expected = "the server responded with a status of 404"
        assert len([e for e in page.errors if expected in e]) <= 2, page.errors
        assert not [e for e in page.errors if expected not in e], page.errors
        assert re.search(r"lang=(zh|en)", page.url)
    finally:
        ctx.close()
