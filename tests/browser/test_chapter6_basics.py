"""Chapter 6 basics in a real Chromium: attention stages, positional encoding, tokenizer merges."""

import re

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"


def open_lab(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function(READY)


def step_to(page, n: int) -> None:
    """Press Step until the session reaches step n (each press waits for its step)."""
    while page.evaluate("() => window.shaomai.store.get('step')") < n:
        before = page.evaluate("() => window.shaomai.store.get('step')")
        page.click("[data-act=step]")
        page.wait_for_function(f"() => window.shaomai.store.get('step') > {before}")


def card_text(page, stage: str) -> str:
    return page.inner_text(f".attn-card[data-stage={stage}]")


def test_attention_steps_through_the_stages_to_the_books_numbers(live_server, page):
    open_lab(page, f"{live_server}/lab.html?lab=attention&lang=en&preset=scores")
    page.wait_for_selector(".attn-ribbon li[data-state=current]")
    assert page.inner_text(".attn-ribbon li[data-state=current]").startswith("1")
    assert "Press “Step”" in card_text(page, "weights")
    step_to(page, 3)
    page.wait_for_function(
        "() => document.querySelector('.attn-ribbon li[data-state=current]').textContent.startsWith('4')"
    )
    assert "÷ √4 = 2" in card_text(page, "scaled")
    step_to(page, 6)
    page.wait_for_function(
        "() => document.querySelector('.attn-card[data-stage=out]').dataset.state === 'current'"
    )
    weights = card_text(page, "weights")
    assert "softmax([2.000, 0.000, −1.000]) = [0.844, 0.114, 0.042]" in weights
    assert "[0.844, 0.114, 0.042] · V = [0.928, 0.270]" in card_text(page, "out")
    screenshot(page, "attention-scores-en")

    # The causal example: the same seven stages, rows of softmax(S + M) on screen.
    page.select_option("#param-preset", "causal")
    page.wait_for_function(
        "() => document.querySelector('.attn-card[data-stage=x]').innerText.includes('今天')"
    )
    weights = card_text(page, "weights")
    for row in (
        "今天\t1\t0\t0\t0",
        "天气\t0.4256\t0.5744\t0\t0",
        "真\t0.2219\t0.3311\t0.4469\t0",  # the book rounds 0.44695 up to 0.4470
        "好\t0.1807\t0.2207\t0.2695\t0.3292",  # and 0.32918 down to 0.3291 (rows sum to 1)
    ):
        assert row in weights, weights
    assert "−∞" in card_text(page, "masked")

    # Click a cell of W_V and type a number: the lab recomputes as "my own" matrices.
    page.click(".attn-card[data-stage=x] figure:nth-of-type(4) td[data-i='3'][data-j='1']")
    page.fill(".attn-card[data-stage=x] td input", "2")
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.shaomai.store.get('params').preset === 'custom'")
    page.wait_for_function(
        "() => document.querySelector('.attn-card[data-stage=out]').innerText.includes('1.149')"
    )
    screenshot(page, "attention-causal-edited-en")

    page.click("#lang-btn")
    page.wait_for_function(
        "() => document.querySelector('.attn-card[data-stage=x] h3').textContent.includes('输入')"
    )
    screenshot(page, "attention-zh")


def test_positional_encoding_draws_the_table_and_shows_the_checks(live_server, page):
    open_lab(page, f"{live_server}/lab.html?lab=positional-encoding&lang=en")
    page.wait_for_function(
        "() => { const c = document.querySelector('.pe-view .panel .chart');"
        " return c && c.data && c.data[0].z.length === 64 && c.data[0].z[0].length === 64; }"
    )
    checks = page.inner_text(".pe-checks")
    numbers = dict(re.findall(r"(max \|[^\n]*)\n([0-9.e−-]+)", checks))
    assert len(numbers) >= 5, checks
    for label, value in numbers.items():
        assert float(value.replace("−", "-")) < 1e-4, (label, value)
    assert "with positions" in checks
    # The clock hands: position 0 points every hand the same way; move the slider.
    page.fill("#pe-position", "9")
    page.dispatch_event("#pe-position", "input")
    assert page.inner_text(".pe-clock-ctl output") == "9"

    page.click("[data-act=play]")
    page.wait_for_function("() => window.shaomai.store.get('step') >= 40")
    page.click("[data-act=play]")
    page.wait_for_function("() => window.shaomai.store.get('state') !== 'playing'")
    chart = "document.querySelector('.pe-train .chart').data[0].y"
    page.wait_for_function(f"() => {chart}.length >= 40")  # curves are extended per frame
    loss = page.evaluate(f"() => {chart}")
    assert loss[-1] < loss[0], loss
    assert "own small GPT" in page.inner_text(".pe-view")
    screenshot(page, "positional-encoding-en")


def test_tokenizer_plays_merges_and_the_token_count_falls(live_server, page):
    open_lab(page, f"{live_server}/lab.html?lab=tokenizer&lang=zh")
    page.wait_for_selector(".tok-compare tr[data-kind=bpe]")
    start = int(page.inner_text(".tok-compare tr[data-kind=bpe] td:nth-child(3)").replace(",", ""))
    assert start == 1312  # no merges yet: one token per character
    page.click("[data-act=play]")
    page.wait_for_function("() => window.shaomai.store.get('step') >= 30")
    page.click("[data-act=play]")
    page.wait_for_function("() => window.shaomai.store.get('state') !== 'playing'")
    page.wait_for_function("() => document.querySelectorAll('.tok-merges li').length >= 30")
    now = int(page.inner_text(".tok-compare tr[data-kind=bpe] td:nth-child(3)").replace(",", ""))
    assert now < start
    page.wait_for_function(
        "() => document.querySelector('.tok-view .chart').data[0].y.length >= 30"
    )
    curve = page.evaluate("() => document.querySelector('.tok-view .chart').data[0].y")
    assert len(curve) >= 30 and curve[0] == 1312 and curve[-1] < curve[0]
    assert all(b <= a for a, b in zip(curve, curve[1:], strict=False))
    ks = page.eval_on_selector_all(
        ".tok-merges .k", "els => els.map(e => Number(e.textContent.slice(1)))"
    )
    assert ks == list(range(ks[0], ks[0] - len(ks), -1))  # newest first, one merge a step
    chips = page.locator(".tok-cut[data-kind=bpe] .tok-chip")
    assert chips.count() < page.locator(".tok-cut[data-kind=char] .tok-chip").count()
    screenshot(page, "tokenizer-zh")

    # A paste over the cap is refused in the page, with its size.
    page.fill("#tok-paste", "烧" * 70_000)
    page.click(".tok-paste-row button")
    assert "210,000" in page.inner_text(".tok-paste-verdict")
