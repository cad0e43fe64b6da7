"""Runs that vanish: a closed tab's run is offered back ("continue your run from step N"),
the URL carries the live step, and after a server restart the page says what happened,
clears the old charts and offers the last autosave."""

import subprocess

import pytest

from tests.conftest import free_port, screenshot, start_server

pytestmark = pytest.mark.browser

DRIVER = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"


def serve(port: int, data_dir, log_name: str) -> subprocess.Popen:
    """uvicorn on a fixed port (a restart must come back where the page reconnects)."""
    return start_server(data_dir=data_dir, port=port, log_name=log_name)[0]


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_closed_tab_offers_to_continue_and_the_url_has_the_step(live_server, browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
    try:
        first = ctx.new_page()
        first.goto(f"{live_server}/lab.html?lab=linear-regression&lang=zh")
        first.wait_for_function(DRIVER)
        first.click("[data-act=step10]")
        first.wait_for_function("() => window.shaomai.store.get('step') === 10")
        first.wait_for_function("() => location.search.includes('step=10')")  # live, in the URL
        first.close()  # the tab goes; the server keeps the session a while
        again = ctx.new_page()
        again.goto(f"{live_server}/lab.html?lab=linear-regression&lang=zh")
        again.wait_for_function(DRIVER)
        again.wait_for_selector("[data-act=continue_run]")
        assert "第 10 步" in again.inner_text("#notice")
        screenshot(again, "continue-run-zh")
        again.click("[data-act=continue_run]")
        again.wait_for_function(DRIVER)
        again.wait_for_function("() => window.shaomai.store.get('step') === 10")
        assert again.is_hidden("[data-act=continue_run]")
    finally:
        ctx.close()


def test_a_server_restart_is_said_charts_cleared_and_the_autosave_offered(browser, tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = serve(port, tmp_path, "restart-1.log")
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = ctx.new_page()
    try:
        page.goto(f"{url}/lab.html?lab=linear-regression&lang=en")
        page.wait_for_function(DRIVER)
        page.click("[data-act=step10]")
        page.wait_for_function("() => window.shaomai.store.get('step') === 10")
        page.click("[data-act=save_run]")  # saved by hand at step 10 (autosave: the same lookup)
        page.wait_for_function("() => !document.querySelector('#toast').hidden")
        stop(proc)
        page.wait_for_function("() => document.body.classList.contains('offline')")
        proc = serve(port, tmp_path, "restart-2.log")
        page.wait_for_function(
            "() => document.querySelector('#notice').textContent.includes('The server restarted')",
            timeout=30_000,
        )
        # A new run under the same id (the page asks to open it again), drawn from step 0.
        page.wait_for_function("() => document.querySelector('#frame-step').textContent === '0'")
        page.wait_for_function(DRIVER)
        assert "step 10" in page.inner_text("#notice")
        assert page.evaluate("() => window.shaomai.store.get('step')") == 0
        # The old run's curve is gone: the loss chart holds step 0 at most.
        page.wait_for_function(
            "() => { const c = document.querySelector('.panel .chart'); return !c.data || c.data[0].x.length <= 1; }"
        )
        page.wait_for_selector("[data-act=restore_run]")
        screenshot(page, "restart-en")
        page.click("[data-act=restore_run]")
        page.wait_for_function(
            DRIVER + " && window.shaomai.store.get('step') === 10", timeout=30_000
        )
    finally:
        ctx.close()
        stop(proc)
