"""'Try this next' under a lab's view: a click sets the experiment's params through the
server (the page's params are the server's `params` answer) and says what to watch."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"


def test_a_click_sets_the_params_and_says_what_to_watch(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=apple&lang=en")
    page.wait_for_function(READY)
    row = page.locator("section.try-next")
    row.wait_for()
    assert row.locator("h2").inner_text() == "Try this next"
    assert row.locator("button").count() == 3
    before = page.evaluate("() => window.shaomai.store.get('params').lr")
    row.locator("button[data-try=diverge]").click()
    # The server's answer (`params`) carries the new lr into the page's store and form.
    page.wait_for_function("() => window.shaomai.store.get('params').lr === 0.12")
    assert before != 0.12
    watch = row.locator(".try-next-watch").inner_text()
    assert watch.startswith("Watch: ") and "each jump is larger" in watch
    assert row.locator("button[data-try=diverge]").get_attribute("aria-pressed") == "true"
    screenshot(page, "try-next-en")


def test_zh_phone_and_a_viewer_sees_none(live_server, browser):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    page = ctx.new_page()
    try:
        page.goto(f"{live_server}/lab.html?lab=softmax-ce&lang=zh")
        page.wait_for_function(READY)
        row = page.locator("section.try-next")
        row.wait_for()
        assert row.locator("h2").inner_text() == "接下来试试"
        row.locator("button[data-try=overflow]").click()
        page.wait_for_function("() => window.shaomai.store.get('params').logits[0] === 90")
        assert row.locator(".try-next-watch").inner_text().startswith("请看：")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        row.scroll_into_view_if_needed()
        screenshot(page, "try-next-zh-phone")
    finally:
        ctx.close()


def test_a_view_with_its_own_try_row_keeps_it_alone(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=depth&lang=en")
    page.wait_for_function(READY)
    page.locator("#view .try-bar").wait_for()
    assert page.locator("section.try-next").count() == 0
