"""Two replicas behind nginx with Redis and PostgreSQL, all real, on loopback (issue 18).

One topology for the module (starting it is the slow part): redis-server, a PostgreSQL
cluster, two app replicas (uvicorn processes) and nginx running deploy/nginx.conf. The
tests run in file order; the last ones kill a replica. An article's readers and a class
poll through the proxy have their own topology (test_readers_and_polls.py).
"""

from __future__ import annotations

import threading
import time

import pytest

from tests.conftest import screenshot
from tests.hosted.clients import (
    DEADLINE_S,
    DRIVER,
    LAB,
    Ws,
    get,
    open_session,
    owner_of,
    reconnect,
    step,
    topology,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hosted():
    # SHAOMAI_JOIN_WAIT_S=0: a join code past its address's turns is 429 at once (countable).
    env = {"SHAOMAI_AUTOSAVE_S": "3", "SHAOMAI_REAP_INTERVAL_S": "1", "SHAOMAI_JOIN_WAIT_S": "0"}
    with topology(**env) as topo:
        yield topo


def test_health_and_metrics_name_the_replica(hosted):
    for r in hosted["replicas"]:
        assert r.health()["replica"] == r.name
        status, text = get(f"{r.url}/metrics")
        assert status == 200
        assert f'shaomai_sessions{{replica="{r.name}"}}' in text
        assert "shaomai_frames_sent_total" in text and "shaomai_steps_total" in text
        assert "shaomai_frames_thinned_total" in text
    assert get(f"{hosted['nginx'].url}/metrics")[0] == 404  # not on the public proxy


def test_twenty_sessions_spread_over_both_replicas_and_each_reconnects_to_its_owner(hosted):
    nginx, replicas = hosted["nginx"], hosted["replicas"]
    before = {r.name: r.health()["sessions"] for r in replicas}
    opened = [open_session(nginx.url) for _ in range(20)]
    after = {r.name: r.health()["sessions"] for r in replicas}
    added = {name: after[name] - before[name] for name in after}
    assert sum(added.values()) == 20
    assert all(n >= 3 for n in added.values()), added  # both replicas hold a share
    for ws, ready in opened:
        ws.close()
        again = Ws(nginx.url, ready["session"], ready["token"])  # a page's reconnect
        back = again.until(lambda m: m["type"] in ("ready", "error"))
        assert back["type"] == "ready" and back["role"] == "driver", back
        again.close()


def test_a_fork_lives_on_its_sources_replica(hosted):
    nginx = hosted["nginx"]
    ws, ready = open_session(nginx.url)
    ws.send({"type": "fork"})
    forked = ws.until(lambda m: m["type"] == "ready")
    assert forked["session"].startswith(ready["session"] + ".")
    ws.close()
    again = Ws(nginx.url, forked["session"], forked["token"])
    assert again.until(lambda m: m["type"] in ("ready", "error"))["type"] == "ready"
    again.close()


def test_a_join_code_resolves_on_the_other_replica_and_the_student_follows(hosted):
    nginx, replicas = hosted["nginx"], hosted["replicas"]
    teacher, ready = open_session(nginx.url)
    teacher.send({"type": "share"})
    code = teacher.until(lambda m: m["type"] == "shared")["code"]
    home = owner_of(hosted, ready["session"])
    other = next(r for r in replicas if r is not home)
    status, found = get(f"{other.url}/api/join/{code}")  # asked of the replica without it
    assert status == 200 and found == {"session": ready["session"], "lab": LAB}
    student = Ws(nginx.url, found["session"])  # what the page does next
    joined = student.until(lambda m: m["type"] == "ready")
    assert joined["role"] == "viewer" and "token" not in joined
    assert step(teacher, 4) == 4
    seen = student.until(lambda m: m["type"] == "frame" and m["step"] == 4)
    assert seen["step"] == 4  # the student follows the teacher's steps
    student.close()
    teacher.close()


def test_a_run_saved_on_one_replica_is_listed_replayed_and_resumed_on_the_other(hosted):
    a, b = hosted["replicas"]
    ws, ready = open_session(a.url)  # straight to replica a
    step(ws, 5)
    ws.send({"type": "save", "name": "from a"})
    saved = ws.until(lambda m: m["type"] in ("saved", "error"))
    assert saved["type"] == "saved", saved
    run = saved["run"]
    ws.close()
    status, listed = get(f"{b.url}/api/runs?lab={LAB}")
    assert status == 200 and run in [r["id"] for r in listed]
    for mode in ("replay", "resume"):
        on_b = Ws(b.url)
        on_b.send({"type": "open", "run": run, "mode": mode})
        back = on_b.until(lambda m: m["type"] in ("ready", "error"))
        assert back["type"] == "ready" and back["step"] == 5, back
        assert back["read_only"] == (mode == "replay")
        on_b.close()


def test_two_hundred_students_behind_one_address_join_while_a_guesser_is_stopped(hosted):
    nginx, (a, b) = hosted["nginx"], hosted["replicas"]
    teacher, ready = open_session(nginx.url)
    teacher.send({"type": "share"})
    code = teacher.until(lambda m: m["type"] == "shared")["code"]
    school = {"X-Forwarded-For": "10.20.30.40"}  # nginx adds the real (loopback) hop
    admitted: list[bool] = []

    def student() -> None:
        status, found = get(f"{nginx.url}/api/join/{code}", school)
        ws = Ws(nginx.url, found["session"])
        admitted.append(
            status == 200 and ws.until(lambda m: m["type"] == "ready")["role"] == "viewer"
        )
        ws.close()

    for _ in range(10):  # 20 at a time
        threads = [threading.Thread(target=student) for _i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert admitted == [True] * 200
    # A guesser's wrong codes spend one address's turns on every replica together: 30 at
    # once, then one a turn (2 s); without a turn each is 429 (docs/security.md, promise 4).
    guesser = {"X-Forwarded-For": "10.9.9.9"}
    wrong = [w for w in (f"{x}{y}ZZZZ" for x in "ABCDEFGH" for y in "ABCDEFGH") if w != code]
    began = time.monotonic()
    statuses = [
        get(f"{(a, b)[i % 2].url}/api/join/{w}", guesser)[0] for i, w in enumerate(wrong[:50])
    ]
    came_back = int((time.monotonic() - began) / 2.0) + 1  # an upper bound: looser when slow
    assert statuses[:30] == [404] * 30 and set(statuses) <= {404, 429}
    assert statuses.count(404) <= 30 + came_back
    assert get(f"{nginx.url}/api/join/{code}", school)[0] == 200  # the school still joins
    teacher.close()


def test_redis_restarted_joins_say_busy_meanwhile_and_sessions_keep_running(hosted):
    nginx, rd = hosted["nginx"], hosted["redis"]
    teacher, ready = open_session(nginx.url)
    teacher.send({"type": "share"})
    code = teacher.until(lambda m: m["type"] == "shared")["code"]
    rd.stop()
    status, body = get(f"{nginx.url}/api/join/{code}")
    assert status == 503 and body["code"] == "busy" and body["key"] == "err.shared_down", body
    assert step(teacher, 3) == 3  # the live session keeps serving
    rd.start()  # empty: the replicas' next heartbeat refills it
    deadline = time.monotonic() + DEADLINE_S
    while get(f"{nginx.url}/api/join/{code}")[0] != 200:
        assert time.monotonic() < deadline, "the code never came back after Redis restarted"
        time.sleep(0.2)
    assert step(teacher, 2) == 5
    teacher.close()


def test_postgres_unreachable_saving_says_so_and_the_session_keeps_running(hosted):
    nginx, pg = hosted["nginx"], hosted["pg"]
    ws, ready = open_session(nginx.url)
    step(ws, 2)
    pg.stop()
    try:
        ws.send({"type": "save", "name": "while the database is away"})
        err = ws.until(lambda m: m["type"] in ("saved", "error"))
        assert err["type"] == "error" and err["key"], err  # a sentence the page shows
        assert step(ws, 2) == 4
    finally:
        pg.start()
    ws.send({"type": "save", "name": "after"})
    assert ws.until(lambda m: m["type"] in ("saved", "error"))["type"] == "saved"
    ws.close()


def test_a_killed_replica_tells_its_clients_and_its_saved_run_reopens_on_the_other(hosted):
    nginx, replicas = hosted["nginx"], hosted["replicas"]
    # Sessions land by the hash of their random ids: open until each replica holds two.
    by_owner: dict[str, list] = {r.name: [] for r in replicas}
    for _ in range(40):
        if min(len(held) for held in by_owner.values()) >= 2:
            break
        ws, ready = open_session(nginx.url)
        by_owner[owner_of(hosted, ready["session"]).name].append((ws, ready))
    assert min(len(held) for held in by_owner.values()) >= 2, {
        k: len(v) for k, v in by_owner.items()
    }
    victim, survivor = replicas
    doomed, alive = by_owner[victim.name], by_owner[survivor.name]
    teacher, tready = doomed[0]
    step(teacher, 3)
    teacher.send({"type": "share"})  # a shared run is autosaved at once
    code = teacher.until(lambda m: m["type"] == "shared")["code"]
    deadline = time.monotonic() + DEADLINE_S
    while get(f"{nginx.url}/api/runs/latest?session={tready['session']}")[0] != 200:
        assert time.monotonic() < deadline, "the shared run was never autosaved"
        time.sleep(0.2)
    victim.kill()
    for ws, _ in doomed:  # their connections end: the page hears it at once
        with pytest.raises(Exception):  # noqa: B017 (closed, by whichever error)
            ws.until(lambda m: False, seconds=10)
    # The page reconnects through nginx: the survivor says the session is gone ...
    again = reconnect(nginx.url, tready["session"], tready["token"])
    lost = again.until(lambda m: m["type"] == "error")
    assert lost["code"] == "not_found" and lost["field"] == "session"
    # ... and offers its last saved state, which reopens there.
    status, last = get(f"{nginx.url}/api/runs/latest?session={tready['session']}")
    assert status == 200 and last["step"] == 3
    again.send({"type": "open", "run": last["id"], "mode": "resume"})
    back = again.until(lambda m: m["type"] in ("ready", "error"))
    assert back["type"] == "ready" and back["step"] == 3, back
    again.close()
    # The dead class's code answers not_found once its lease runs out, never a hang.
    deadline = time.monotonic() + 3 * DEADLINE_S
    while get(f"{nginx.url}/api/join/{code}")[0] != 404:
        assert time.monotonic() < deadline, "the dead replica's code still resolves"
        time.sleep(0.5)
    for ws, _ in alive:  # the survivor's sessions never noticed
        assert step(ws, 1) == 1
        ws.close()


def saved_step(url: str, sid: str) -> int | None:
    """The step of a session's latest autosave; None before the first (204, no body)."""
    status, body = get(f"{url}/api/runs/latest?session={sid}")
    return body.get("step") if status == 200 else None


@pytest.mark.browser
def test_a_page_whose_replica_dies_says_so_and_restores_on_the_other(hosted, browser):
    """As a reader sees it, through nginx: the page's replica is killed; the page says the
    run is gone, offers its last autosave, and the restore trains on from there."""
    nginx, replicas = hosted["nginx"], hosted["replicas"]
    for r in replicas:
        if r.proc.poll() is not None:
            r.restart()  # both alive again: the page may land on either
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = ctx.new_page()
    try:
        page.goto(f"{nginx.url}/lab.html?lab={LAB}&lang=en")
        page.wait_for_function(DRIVER)
        page.click("[data-act=step10]")
        page.wait_for_function("() => window.shaomai.store.get('step') === 10")
        sid = page.evaluate("() => window.shaomai.client.session")
        deadline = time.monotonic() + DEADLINE_S
        while saved_step(nginx.url, sid) != 10:
            assert time.monotonic() < deadline, "the page's run was never autosaved at 10"
            time.sleep(0.2)
        owner_of(hosted, sid).kill()
        page.wait_for_function(
            "() => document.querySelector('#notice').textContent.includes('the run at step 10 is gone')",
            timeout=60_000,
        )
        page.wait_for_selector("[data-act=restore_run]", timeout=30_000)
        screenshot(page, "hosted-replica-lost-en")
        page.click("[data-act=restore_run]")
        page.wait_for_function(
            DRIVER + " && window.shaomai.store.get('step') === 10", timeout=60_000
        )
        page.click("[data-act=step10]")  # and it trains on, on the survivor
        page.wait_for_function("() => window.shaomai.store.get('step') === 20", timeout=60_000)
    finally:
        ctx.close()
