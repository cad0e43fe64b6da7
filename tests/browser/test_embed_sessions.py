"""Two embeds of the same lab on one article page each drive their own session: iframes of
one origin share the tab's sessionStorage, where a top-level page remembers its session for
a reload; an embed must not pick up the one its sibling remembered."""

import pytest

pytestmark = pytest.mark.browser

DRIVER = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
FRAME = """(src) => new Promise((done) => {
  const f = document.createElement('iframe');
  f.src = src; f.width = 600; f.height = 420; f.onload = () => done(true);
  document.body.append(f);
})"""


def test_a_second_embed_of_a_lab_opens_its_own_session(live_server, page):
    page.goto(f"{live_server}/?lang=en")  # a page of the app's origin holds the article
    page.wait_for_selector(".card")
    page.evaluate("() => { document.body.innerHTML = '<h1>Gradient descent</h1>'; }")
    src = f"{live_server}/lab.html?lab=linear-regression&embed=1&controls=play,step&lang=en"
    page.evaluate(FRAME, src)
    first = page.frames[1]
    first.wait_for_function(DRIVER)
    first.wait_for_function("() => window.shaomai.client.token")  # remembered by now
    page.evaluate(FRAME, src)  # the second embed loads after the first remembered its session
    second = page.frames[2]
    second.wait_for_function(DRIVER)
    sessions = [f.evaluate("() => window.shaomai.client.session") for f in (first, second)]
    assert sessions[0] and sessions[1] and sessions[0] != sessions[1], sessions
    # Each drives its own model: a step in the second leaves the first at step 0.
    second.click("[data-act=step]")
    second.wait_for_function("() => window.shaomai.store.get('step') === 1")
    assert first.evaluate("() => window.shaomai.store.get('step')") == 0
