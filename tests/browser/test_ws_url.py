"""The page puts the session id (and the driver's token) in the websocket URL, every time."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.conftest import ARTIFACTS

pytestmark = pytest.mark.browser

DRIVER = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
ID = re.compile(r"[A-Za-z0-9_-]{22}")


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def test_new_session_id_in_the_url_rejoin_and_reload(live_server, page):
    urls: list[str] = []
    page.on("websocket", lambda ws: urls.append(ws.url))
    page.goto(f"{live_server}/lab.html?lab=linear-regression&lang=en")
    page.wait_for_function(DRIVER)
    sid = page.evaluate("() => window.shaomai.client.session")
    assert ID.fullmatch(sid), sid  # made by the page: 16 random bytes
    assert query(urls[0]) == {"session": sid}  # the open went out on the new id
    assert page.is_hidden("#toast")  # the expected not_found of a new id is not shown
    token = page.evaluate("() => window.shaomai.client.token")

    # A dropped connection comes back on the same id, as the driver.
    page.evaluate("() => window.shaomai.client.ws.close()")
    page.wait_for_function(
        "() => window.shaomai.client.ws.readyState === 1 && !document.body.classList.contains('offline')"
    )
    page.click("[data-act=step]")
    page.wait_for_function("() => window.shaomai.store.get('step') === 1")
    assert query(urls[-1]) == {"session": sid, "token": token}

    # A reload rejoins the same session through the URL (no join message).
    page.reload()
    page.wait_for_function(DRIVER)
    page.wait_for_function("() => window.shaomai.store.get('step') === 1")
    assert page.evaluate("() => window.shaomai.client.session") == sid
    assert query(urls[-1]) == {"session": sid, "token": token}
    assert len(urls) == 3
    # The token in the URL stays out of the server's log (uvicorn logs each upgrade's URL).
    log = (ARTIFACTS / f"server-{urlsplit(live_server).port}.log").read_text()
    assert f"session={sid}&token=***" in log and token not in log
