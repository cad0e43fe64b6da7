"""A teacher's desktop page sharing the `gpt` lab and a student's phone page (not yet joined):
the setting of the tests of what a class's phones are sent."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
ROLE = "() => window.shaomai && window.shaomai.store.get('role') === '{}'"


@contextmanager
def gpt_class(live_server, browser, phone_locale: str = "en-US") -> Iterator[tuple]:
    """(teacher, student, code, errors): the teacher's gpt shared (its card closed), the
    phone's page blank; page errors of both collect in `errors`."""
    tctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    sctx = browser.new_context(**PHONE, locale=phone_locale)
    teacher, student = tctx.new_page(), sctx.new_page()
    errors: list[str] = []
    for pg in (teacher, student):
        pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        teacher.goto(f"{live_server}/lab.html?lab=gpt&lang=en")
        teacher.wait_for_function(ROLE.format("driver"))
        teacher.click("[data-act=share_class]")
        teacher.wait_for_selector(".share-overlay:not([hidden]) .qr")
        code = teacher.evaluate("() => window.shaomai.store.get('shareCode')")
        teacher.click(".share-card .close")
        yield teacher, student, code, errors
    finally:
        tctx.close()
        sctx.close()
