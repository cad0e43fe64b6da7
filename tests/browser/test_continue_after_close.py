"""A tab closed while its run plays: the server pauses the run nobody watches, and the
same lab opened again in this browser offers to continue it at the step it reached.

The page records the step as the run moves (a playing run sends no `status` to record it
by), so the offer names a step past 0; "Continue" rejoins the run paused there.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

DRIVER = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
OFFER = {"en": r"at step (\d+)", "zh": r"在第 (\d+) 步"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_tab_closed_while_playing_offers_to_continue_its_run(live_server, browser, lang):
    locale = "zh-CN" if lang == "zh" else "en-US"
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale=locale)
    errors: list[str] = []
    try:
        url = f"{live_server}/lab.html?lab=rnn&lang={lang}"
        first = ctx.new_page()
        first.on("pageerror", lambda e: errors.append(str(e)))
        first.goto(url)
        first.wait_for_function(DRIVER)
        first.click("[data-act=play]")
        first.wait_for_function("() => window.shaomai.store.get('state') === 'playing'")
        first.wait_for_function("() => window.shaomai.store.get('step') >= 40")
        first.close()  # playing: no pause, no status after the run's start
        again = ctx.new_page()
        again.on("pageerror", lambda e: errors.append(str(e)))
        again.goto(url)
        again.wait_for_function(DRIVER)
        again.wait_for_selector("[data-act=continue_run]")
        offered = int(re.search(OFFER[lang], again.inner_text("#notice")).group(1))
        assert offered >= 40
        screenshot(again, f"continue-after-close-{lang}")
        again.click("[data-act=continue_run]")
        again.wait_for_function(DRIVER)
        # The run waited, paused, where the closed tab left it (not trained on meanwhile).
        again.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
        assert again.evaluate("() => window.shaomai.store.get('step')") >= offered
    finally:
        ctx.close()
    assert not errors, errors
