"""Issue 12's "Done when", as one class: a teacher behind the class's own address shares the
gpt lab in presenter mode at 1280×720; forty students join from that address (two phones in
Chromium, one by the QR code's link in zh and one typing the code on the catalog in en, and
38 real websocket clients); the teacher selects a head and scrubs and every phone follows
without overflow; a phone reloads and is still in the class; the server restarts, everyone
is told, the teacher restores and the class is back under its code.

A bad link's sentence and a long paste are tested in test_bad_links.py and test_gpt.py."""

import json
from contextlib import ExitStack

import pytest
from websockets.sync.client import connect

from tests.browser.test_classroom_follow import PHONE, ROLE, watch, zoomed
from tests.browser.test_reload import stop
from tests.conftest import free_port, screenshot, start_server

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(900)]

WAIT = {"timeout": 60_000}  # a deadline for a loaded 2-core machine, not a speed check


def ws_student(stack: ExitStack, base: str, code: str):
    """A student's phone as a bare websocket client: joins by the code, as the page does."""
    url = base.replace("http", "ws") + "/ws"
    ws = stack.enter_context(connect(url, open_timeout=30, max_size=None, ping_interval=None))
    ws.send(json.dumps({"type": "join", "code": code}))
    while True:
        msg = ws.recv(timeout=30)
        if isinstance(msg, str) and json.loads(msg)["type"] in ("ready", "error"):
            ready = json.loads(msg)
            assert ready["type"] == "ready" and ready["role"] == "viewer", ready
            return ws


def sees_view(ws, layer: int, head: int) -> bool:
    while True:
        msg = ws.recv(timeout=30)
        if isinstance(msg, str):
            m = json.loads(msg)
            if m["type"] == "view" and (m["state"].get("layer"), m["state"].get("head")) == (
                layer,
                head,
            ):
                return True


def no_overflow(page):
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, f"the phone page is {width} px wide"


def test_a_class_of_forty_follows_reloads_and_survives_a_restart(browser, tmp_path):
    port = free_port()
    proc, base, _ = start_server(data_dir=tmp_path, port=port, log_name="class-of-40-1.log")
    tctx = browser.new_context(viewport={"width": 1280, "height": 720}, locale="en-US")
    qctx = browser.new_context(**PHONE, locale="zh-CN")
    cctx = browser.new_context(**PHONE, locale="en-US")
    teacher, by_qr, by_code = watch(tctx.new_page()), watch(qctx.new_page()), watch(cctx.new_page())
    sockets = []
    stack = ExitStack()
    try:
        teacher.goto(f"{base}/lab.html?lab=gpt&lang=en&present=1")
        teacher.wait_for_function(ROLE.format("driver"), **WAIT)
        teacher.click("[data-act=step10]")
        teacher.wait_for_function("() => window.shaomai.store.get('step') === 10", **WAIT)
        teacher.click("[data-act=share_class]")
        teacher.wait_for_selector(".share-overlay:not([hidden]) .qr")
        code = teacher.evaluate("() => window.shaomai.store.get('shareCode')")
        teacher.click(".share-card .close")

        # Forty students from one address: the QR link, the catalog's code field, 38 sockets.
        by_qr.goto(f"{base}/join/{code}")
        by_code.goto(f"{base}/?lang=en")
        by_code.fill("#join-code", f"{code[:3].lower()} {code[3:].lower()}")
        by_code.click("#join-form button[type=submit]")
        sockets = [ws_student(stack, base, code) for _ in range(38)]
        for phone in (by_qr, by_code):
            phone.wait_for_function(ROLE.format("viewer"), **WAIT)
            phone.wait_for_function("() => document.body.classList.contains('present')")
        teacher.wait_for_function(
            "() => document.querySelector('.connections').textContent.includes('40')", **WAIT
        )

        # The teacher enlarges a head and scrubs back: every phone follows, none overflows.
        teacher.evaluate(
            "() => { window.shaomai.store.set('layer', 1); window.shaomai.store.set('head', 2); }"
        )
        for phone in (by_qr, by_code):
            phone.wait_for_function(zoomed(1, 2), **WAIT)
        assert all(sees_view(ws, 1, 2) for ws in sockets)
        teacher.evaluate(
            "() => { const r = document.querySelector('#scrubber input'); r.value = 4; r.oninput(); }"
        )
        for phone in (by_qr, by_code):
            phone.wait_for_function("() => window.shaomai.store.get('shownStep') === 4", **WAIT)
            no_overflow(phone)
        screenshot(by_qr, "class-of-40-phone-zh")
        screenshot(by_code, "class-of-40-phone-en")
        screenshot(teacher, "class-of-40-teacher-1280x720")

        # A reload stays in the class.
        by_qr.reload()
        by_qr.wait_for_function(ROLE.format("viewer"), **WAIT)
        assert f"join={code}" in by_qr.url

        # The server restarts: everyone is told; the phones wait in the class.
        stack.close()
        stop(proc)
        proc, _, _ = start_server(data_dir=tmp_path, port=port, log_name="class-of-40-2.log")
        teacher.wait_for_selector("[data-act=restore_run]", **WAIT)
        assert "The server restarted" in teacher.inner_text("#notice")
        by_qr.wait_for_function(
            f"() => document.querySelector('#notice').textContent.includes('{code[:3]} {code[3:]}')",
            **WAIT,
        )
        assert "老师恢复" in by_qr.inner_text("#notice")  # in the phone's language
        by_code.wait_for_function(
            "() => document.querySelector('#notice').textContent.includes('rejoins class')", **WAIT
        )
        screenshot(by_qr, "class-of-40-restart-phone-zh")
        screenshot(teacher, "class-of-40-restart-teacher")
        # The teacher closes the enlarged head and restores: the class is back under its
        # code, at the saved step.
        teacher.click(".attn-zoom .mg-close")
        teacher.click("[data-act=restore_run]")
        teacher.wait_for_function(
            ROLE.format("driver") + " && window.shaomai.store.get('step') === 10", **WAIT
        )
        teacher.wait_for_function(f"() => window.shaomai.store.get('shareCode') === '{code}'")
        for phone in (by_qr, by_code):
            phone.wait_for_function(
                ROLE.format("viewer") + " && window.shaomai.store.get('step') === 10", **WAIT
            )
            assert phone.is_hidden("#notice")
            assert f"join={code}" in phone.url
            no_overflow(phone)
        screenshot(by_qr, "class-of-40-restored-phone-zh")
        errors = teacher.errors + by_qr.errors + by_code.errors
        assert not errors, errors
    finally:
        stack.close()
        tctx.close()
        qctx.close()
        cctx.close()
        stop(proc)
