"""Readers and a class through the proxy (issue 18, 20): an article on another origin whose
iframes open labs on both replicas, and a poll whose students land on either replica.

Its own topology, so the sessions these leave open (a reader's page is kept for a rejoin)
do not count against the address limit of test_replicas.py's tests.
"""

from __future__ import annotations

import functools
import http.server
import secrets
import threading

import pytest

from tests.conftest import screenshot
from tests.hosted.clients import DRIVER, LAB, Ws, get, open_session, owner_of, topology

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hosted():
    # The article is served from another port: the replicas let it embed them.
    with topology(SHAOMAI_FRAME_ANCESTORS="'self' http://127.0.0.1:*") as topo:
        yield topo


def test_a_class_poll_through_the_proxy_counts_each_student_once_on_the_owner(hosted):
    """Students whose codes resolve on either replica vote through nginx; the session's
    owner holds the poll and counts each student once (a student reconnecting included)."""
    nginx, replicas = hosted["nginx"], hosted["replicas"]
    teacher, ready = open_session(nginx.url)
    teacher.send({"type": "share"})
    code = teacher.until(lambda m: m["type"] == "shared")["code"]
    sid = ready["session"]
    for r in replicas:  # the code resolves on both
        assert get(f"{r.url}/api/join/{code}")[1]["session"] == sid
    kids = [Ws(nginx.url, sid) for _ in range(12)]
    for k in kids:
        k.until(lambda m: m["type"] == "ready")
    teacher.send({"type": "poll", "question": "Which?", "choices": ["a", "b", "c"]})
    poll = teacher.until(lambda m: m["type"] == "poll_state")
    voters = [secrets.token_urlsafe(16) for _ in kids]
    for i, (k, v) in enumerate(zip(kids, voters, strict=True)):
        k.until(lambda m: m["type"] == "poll_state")
        for _ in range(3):  # tapping again counts once
            k.send({"type": "vote", "choice": i % 3, "voter": v, "poll": poll["id"]})
    kids[0].close()  # a phone that drops and comes back keeps its one vote
    kids[0] = Ws(nginx.url, sid)
    late = kids[0].until(lambda m: m["type"] == "poll_state")
    assert late["id"] == poll["id"]
    kids[0].send({"type": "vote", "choice": 1, "voter": voters[0], "poll": poll["id"]})
    final = teacher.until(lambda m: m["type"] == "poll_state" and m["counts"] == [3, 5, 4])
    assert final["voters"] == 12
    for ws in (teacher, *kids):
        ws.close()


READERS = 12  # with random session ids, all 12 on one replica is a 1-in-2,048 chance


def test_an_articles_iframes_open_labs_across_replicas(hosted, browser, tmp_path):
    """An article on another origin embeds the lab, pointed at the proxy: every reader's
    iframe opens its own live lab, and the sessions land on both replicas."""
    nginx, replicas = hosted["nginx"], hosted["replicas"]
    src = f"{nginx.url}/lab.html?lab={LAB}&embed=1&controls=play,step&lang=en"
    frames = "".join(
        f'<iframe src="{src}" title="reader {i}" width="600" height="420"></iframe>'
        for i in range(READERS)
    )
    (tmp_path / "article.html").write_text(
        f"<!doctype html><title>An article</title><h1>Gradient descent</h1>{frames}",
        encoding="utf-8",
    )
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    article = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=article.serve_forever, daemon=True).start()
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = ctx.new_page()
    try:
        page.goto(f"http://127.0.0.1:{article.server_address[1]}/article.html")
        inner = page.frames[1:]
        assert len(inner) == READERS
        sessions = []
        for f in inner:
            f.wait_for_function(DRIVER, timeout=60_000)
            f.wait_for_function(
                "() => document.querySelector('#view canvas, #view svg, #view .js-plotly-plot')"
            )
            sessions.append(f.evaluate("() => window.shaomai.client.session"))
        inner[0].click("[data-act=step]")  # a live model, not a picture
        inner[0].wait_for_function("() => window.shaomai.store.get('step') === 1")
        owners = {owner_of(hosted, sid).name for sid in sessions}
        assert len(set(sessions)) == READERS and owners == {r.name for r in replicas}, owners
        screenshot(page, "hosted-article-iframes")
    finally:
        ctx.close()
        article.shutdown()
        article.server_close()
