"""The `optimizers` lab in a real Chromium: one step and Adam without bias correction lurches
3.16 learning rates (the race card, the readout and its path say so); play draws five paths
and five loss curves; a per-arm learning rate edited in the race card applies live; the MLP
shows five boundaries. Screenshots en + zh, desktop + 390×844."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
PATHS = "() => document.querySelector('.opt-paths .chart').data"
NO_BIAS = 4  # arm index: SGD, momentum, RMSProp, Adam, Adam without bias correction


def at_step(page, n: int) -> None:
    page.wait_for_function(f"() => window.shaomai.store.get('step') >= {n}")


def card(page) -> list[list[str]]:
    return page.eval_on_selector_all(
        ".opt-table tbody tr",
        "rows => rows.map(r => [...r.children].map(c => c.textContent.trim()))",
    )


def curves_drawn(page, points: int) -> None:
    """The loss chart has a curve of at least `points` points for each of the five arms."""
    page.wait_for_function(
        "() => document.querySelector('.dash-chart .chart').data"
        f".filter(t => t.x.length >= {points}).length === 5"
    )


def open_lab(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function(READY)
    page.wait_for_function(f"() => ({PATHS})() && ({PATHS})().length === 9")  # contour+5+3
    page.wait_for_function("() => document.querySelectorAll('.opt-table tbody tr').length === 5")


def test_adam_without_bias_correction_lurches_then_five_arms_race(live_server, page):
    open_lab(page, f"{live_server}/lab.html?lab=optimizers&lang=en")
    assert [r[0] for r in card(page)] == [
        "SGD",
        "Momentum",
        "RMSProp",
        "Adam",
        "Adam without bias correction",
    ]
    page.click("[data-act=step]")
    at_step(page, 1)
    page.wait_for_selector(".opt-lurch:not([hidden])")
    rows = card(page)
    assert rows[NO_BIAS][2].startswith("3.162 × lr")  # first step: 0.1/√0.001 learning rates
    assert rows[3][2].startswith("1 × lr")  # Adam, bias-corrected: one learning rate
    assert "3.162 × lr" in page.inner_text(".opt-lurch")
    readout = page.inner_text(".dash-readout")
    assert "Adam without bias correction: first step" in readout and "3.162 × lr" in readout
    assert "lr 0.001, betas (0.9, 0.999), eps 1e-8" in readout  # torch.optim.Adam's defaults
    # The path: from (-8, 1.5) the lurching arm moved 0.316 on each axis, Adam 0.1.
    page.wait_for_function(f"() => ({PATHS})()[{NO_BIAS + 1}].x.length === 2")
    data = page.evaluate(PATHS)
    nb, adam = data[NO_BIAS + 1], data[4]
    assert nb["x"][1] - nb["x"][0] == pytest.approx(0.316228, rel=1e-4)
    assert adam["x"][1] - adam["x"][0] == pytest.approx(0.1, rel=1e-4)
    curves_drawn(page, 2)
    screenshot(page, "optimizers-first-step")

    page.click("[data-act=play]")
    at_step(page, 120)
    page.click("[data-act=play]")  # pause
    page.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
    data = page.evaluate(PATHS)
    assert data[0]["type"] == "contour" and len(data[0]["z"]) == 64
    assert [len(tr["x"]) > 100 for tr in data[1:6]] == [True] * 5
    curves_drawn(page, 100)
    screenshot(page, "optimizers-race")

    # A per-arm learning rate, edited in the race card, applies live: the run goes on.
    step = page.evaluate("() => window.shaomai.store.get('step')")
    page.fill(".opt-table tr[data-arm='3'] input[data-field=adam_lr]", "0.03")
    page.press(".opt-table tr[data-arm='3'] input[data-field=adam_lr]", "Enter")
    page.wait_for_function("() => window.shaomai.store.get('params').adam_lr === 0.03")
    params = page.evaluate("() => window.shaomai.store.get('params')")
    assert params["lr_mode"] == "custom" and params["sgd_lr"] == 0.09  # the others kept theirs
    assert page.evaluate("() => window.shaomai.store.get('step')") == step  # not rebuilt
    assert page.input_value("#param-lr_mode") == "custom"
    page.click("[data-act=step]")
    at_step(page, step + 1)
    page.wait_for_function(
        "() => document.querySelector(\".opt-table tr[data-arm='3'] input\").value === '0.03'"
    )


def test_chinese_on_a_phone_and_the_mlp(live_server, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    try:
        open_lab(page, f"{live_server}/lab.html?lab=optimizers&lang=zh&surface=rosenbrock")
        page.click("[data-act=step10]")
        at_step(page, 10)
        page.wait_for_selector(".opt-lurch:not([hidden])")
        assert "没有偏差修正的 Adam：第一步是 3.162 × lr" in page.inner_text(".opt-lurch")
        assert card(page)[NO_BIAS][0] == "Adam（无偏差修正）"
        assert page.evaluate(PATHS)[0]["x"][0] == -2  # Rosenbrock's box
        curves_drawn(page, 11)
        screenshot(page, "optimizers-zh-phone")

        page.goto(f"{live_server}/lab.html?lab=optimizers&lang=zh&surface=mlp")
        page.wait_for_function(READY)
        page.wait_for_function(
            "() => document.querySelectorAll('.opt-table tbody tr').length === 5"
        )
        page.click("[data-act=step10]")
        at_step(page, 10)
        page.wait_for_selector(".opt-boundaries:not([hidden]) canvas")
        assert page.is_hidden(".opt-paths")
        assert card(page)[NO_BIAS][2].startswith("3.162 × lr")  # the MLP's too
        curves_drawn(page, 11)
        screenshot(page, "optimizers-zh-phone-mlp")
    finally:
        context.close()
    assert not errors, errors


def test_desktop_chinese_and_phone_english(live_server, browser):
    for lang, (w, h) in (("zh", (1400, 1000)), ("en", (390, 844))):
        context = browser.new_context(viewport={"width": w, "height": h})
        page = context.new_page()
        errors: list[str] = []
        page.on(
            "console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None
        )
        page.on("pageerror", lambda e, errors=errors: errors.append(f"uncaught: {e}"))
        try:
            open_lab(page, f"{live_server}/lab.html?lab=optimizers&lang={lang}&noise=true")
            page.click("[data-act=step10]")
            at_step(page, 10)
            page.wait_for_selector(".opt-lurch:not([hidden])")
            curves_drawn(page, 11)
            screenshot(page, f"optimizers-{lang}-{w}")
        finally:
            context.close()
        assert not errors, errors


def test_five_arms_hold_through_scrub_reload_and_fork(live_server, page):
    open_lab(page, f"{live_server}/lab.html?lab=optimizers&lang=en&noise=true")
    for n in (10, 20):
        page.click("[data-act=step10]")
        at_step(page, n)
    page.wait_for_function(f"() => ({PATHS})()[1].x.length === 21")  # steps 0..20
    live = page.evaluate(PATHS)

    # Scrub back to step 5: every arm's marker sits on its path's sixth point.
    page.eval_on_selector(
        ".scrubber input", "e => { e.value = 5; e.dispatchEvent(new Event('input')); }"
    )
    page.wait_for_function("() => document.querySelector('#frame-step').textContent === '5'")
    page.wait_for_function(f"() => ({PATHS})()[6].x[3] === ({PATHS})()[4].x[5]")
    now = page.evaluate(PATHS)[6]
    assert now["x"] == [live[i + 1]["x"][5] for i in range(5)]
    assert now["y"] == [live[i + 1]["y"][5] for i in range(5)]
    page.click(".scrubber .live")
    page.wait_for_function("() => document.querySelector('#frame-step').textContent === '20'")

    # Reload: the same session, its five paths and the first steps come back.
    page.reload()
    page.wait_for_function(READY)
    page.wait_for_function(f"() => ({PATHS})() && ({PATHS})()[1].x.length === 21")
    again = page.evaluate(PATHS)
    assert [tr["x"] for tr in again[1:6]] == [tr["x"] for tr in live[1:6]]
    page.wait_for_selector(".opt-lurch:not([hidden])")
    assert card(page)[NO_BIAS][2].startswith("3.162 × lr")

    # Fork: a copy trains on from step 20 on the same noise stream, five arms still.
    page.click("[data-act=fork]")
    page.wait_for_function(READY)
    page.click("[data-act=step10]")
    at_step(page, 30)
    page.wait_for_function(f"() => ({PATHS})()[1].x.length === 31")
    forked = page.evaluate(PATHS)
    assert [tr["x"][:21] for tr in forked[1:6]] == [tr["x"] for tr in live[1:6]]
    curves_drawn(page, 31)
    screenshot(page, "optimizers-forked")
