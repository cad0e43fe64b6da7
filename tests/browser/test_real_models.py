"""Chapter 8 in a real Chromium: type a sentence into `real-bert`, click "it", see which heads
link it to "animal"; ask `real-llm` the question and watch SmolLM2 answer token by token.
Screenshots en + zh, desktop and a 390×844 phone, land in tests/artifacts/."""

from __future__ import annotations

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

SENTENCES = [
    "The animal didn't cross the street because it was too tired",
    "The dog was too sleepy to walk across the road.",
    "Stock prices fell sharply on Monday.",
]
WATCH = """() => { window.__tokens = [];
  new MutationObserver(() => window.__tokens.push(Number(document.querySelector('#view').dataset.tokens)))
    .observe(document.querySelector('#view'), { attributes: true, attributeFilter: ['data-tokens'] }); }"""
PIXELS = """(sel) => { const c = document.querySelector(sel);
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; }"""


def driver(page) -> None:
    page.wait_for_function("() => window.shaomai && window.shaomai.store.get('role') === 'driver'")


def phone(browser, locale: str):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, locale=locale)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    return ctx, pg, errors


def test_real_bert_type_a_sentence_click_it_and_see_the_heads(live_server, page, browser):
    page.goto(f"{live_server}/lab.html?lab=real-bert&lang=en")
    driver(page)
    page.wait_for_function("() => document.querySelector('#view').dataset.tokens === '15'")
    page.fill(".rb-form textarea", "\n".join(SENTENCES))
    page.click(".rb-form button[type=submit]")
    page.wait_for_function("() => document.querySelectorAll('.rb-sentences li').length === 3")
    chips = page.eval_on_selector_all(".rb-strip .tok", "els => els.map(e => e.textContent)")
    it = chips.index("it")
    page.locator(".rb-strip .tok").nth(it).click()
    page.wait_for_function("() => document.querySelectorAll('.rb-rank li').length > 0")
    rows = page.eval_on_selector_all(".rb-rank li", "els => els.map(e => e.textContent)")
    assert any("→ “animal”" in r for r in rows), rows  # measured heads that link it to animal
    assert f"token={it}" in page.url and "layer=" in page.url  # the class and a link follow
    assert page.evaluate(PIXELS, ".rb-view .mg-main") > 10_000  # the 6 × 12 maps are drawn
    assert page.get_attribute(".rb-head-canvas", "data-focus") == str(it)
    # Pick "animal" as the word: the heads come ranked by the weight "it" puts on it.
    page.select_option(".rb-to select", str(chips.index("animal")))
    first = page.inner_text(".rb-rank li:first-child")
    assert "“it” → “animal”" in first
    page.click(".rb-rank li:first-child button")  # the head view shows that head
    head = page.inner_text(".rb-rank li:first-child button")  # e.g. "L5 H11"
    assert page.get_attribute(".rb-head-canvas", "data-layer") == head.split()[0][1:]
    assert "[CLS]" in page.inner_text(".rb-view .prob-bars")  # the sinks, measured
    screenshot(page, "real-bert-en")
    page.click("#lang-btn")
    page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
    assert "注意力汇" in page.inner_text(".rb-view")
    screenshot(page, "real-bert-zh")
    url = page.url
    # Chinese input: most characters become [UNK], and the page says so.
    page.fill(".rb-form textarea", "小烧麦实验室")
    page.click(".rb-form button[type=submit]")
    page.wait_for_function("() => document.querySelectorAll('.rb-strip .tok.x-unk').length >= 3")
    assert page.is_visible(".rb-warn") and "[UNK]" in page.inner_text(".rb-warn")

    for locale, lang in (("en-US", "en"), ("zh-CN", "zh")):
        ctx, pg, errors = phone(browser, locale)
        pg.goto(url.replace("lang=zh", f"lang={lang}"))
        driver(pg)
        pg.wait_for_function(
            "() => document.querySelectorAll('.rb-rank li').length > 0"
        )  # token= in the link
        screenshot(pg, f"real-bert-{lang}-phone")
        ctx.close()
        assert not errors, errors


@pytest.mark.slow
def test_real_llm_answers_paris_token_by_token(live_server, page, browser):
    page.goto(f"{live_server}/lab.html?lab=real-llm&lang=en")
    driver(page)
    assert "4-bit" in page.inner_text(".rl-note")  # before any weight is loaded
    page.evaluate(WATCH)
    page.click(".rl-go")
    # The first generation loads the model (once per server), then tokens arrive one by one.
    page.wait_for_function(
        "() => document.querySelector('#view').dataset.done === '1'", timeout=300_000
    )
    answer = page.inner_text(".rl-answer")
    assert "Paris" in answer, answer
    counts = page.evaluate("() => window.__tokens")
    assert len(counts) >= 3 and counts == sorted(counts), counts  # drawn as they came, one by one
    assert "46,080" in page.inner_text(".rl-view")  # the measured cache row beside the config's
    assert page.evaluate(PIXELS, ".rl-view .mg-main") > 10_000  # 30 layers × 9 heads drawn
    assert "Q4_1" in page.inner_text(".rl-note")  # the mix, read from the file
    # Click "Paris": its step's candidates, with Paris chosen.
    page.locator(".rl-answer .rl-tok", has_text="Paris").click()
    assert "Paris" in page.inner_text(".rl-view .prob-bars li.hot")
    # Live odds: the same step under temperature 1.5, recomputed by the server.
    page.fill("input[name=temperature]", "1.5")
    page.dispatch_event("input[name=temperature]", "input")
    page.wait_for_function(
        "() => document.querySelector('.rl-view').textContent.includes('temperature 1.5')"
    )
    screenshot(page, "real-llm-en")
    page.click("#lang-btn")
    page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
    screenshot(page, "real-llm-zh")
    for locale, lang in (("en-US", "en"), ("zh-CN", "zh")):
        ctx, pg, errors = phone(browser, locale)
        pg.goto(f"{live_server}/lab.html?lab=real-llm&lang={lang}")
        driver(pg)
        pg.fill("input[name=max_new]", "8")
        pg.click(".rl-go")  # the model is loaded: this session shares it
        pg.wait_for_function(
            "() => document.querySelector('#view').dataset.done === '1'", timeout=120_000
        )
        assert "Paris" in pg.inner_text(".rl-answer")
        screenshot(pg, f"real-llm-{lang}-phone")
        ctx.close()
        assert not errors, errors
