"""The `transformer` lab in a real Chromium: train a few steps, type a phrase, read its
translation by greedy decoding and by beam search with the cross-attention of every head;
an unknown word is refused in the page's language; the facts panels; en + zh, desktop and
a 390×844 phone without sideways scroll."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
FRAME = "() => document.querySelector('#view').dataset.step !== undefined"


def translate(page, text: str, before: int) -> None:
    page.fill(".tf-text", text)
    page.click(".tf-go")
    page.wait_for_function(
        f"() => Number(document.querySelector('#view').dataset.infer || 0) > {before}"
    )


def cross_maps(page) -> dict:
    return page.evaluate(
        """() => { const h = document.querySelector('.tf-maps[data-key=infer]');
        return { kind: h.dataset.kind, w: h.querySelector('canvas').width,
                 aria: h.querySelector('canvas').getAttribute('aria-label') }; }"""
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_translate_a_phrase_greedy_and_beam_with_cross_attention(live_server, page, lang):
    page.goto(f"{live_server}/lab.html?lab=transformer&lang={lang}")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    page.click("[data-act=step10]")
    page.wait_for_function("() => Number(document.querySelector('#view').dataset.step) >= 10")
    translate(page, "three hundred twenty one", 0)
    text = page.inner_text(".tf-result")
    greedy, beam = ("Greedy", "Beam search") if lang == "en" else ("贪心解码", "集束搜索")
    assert greedy in text and beam in text
    assert page.locator(".tf-hyps tr").count() == 1 + 4  # header + width 4
    maps = cross_maps(page)
    assert maps["kind"] == "cross" and maps["w"] > 0
    assert "8 " in maps["aria"] or "8 张" in maps["aria"]  # 2 layers × 4 heads
    # every kind of attention draws, for greedy and for beam
    for kind in ("dec", "enc", "cross"):
        page.locator(".tf-kinds").first.locator(f"[data-kind={kind}]").click()
        assert cross_maps(page)["kind"] == kind
    page.click(".tf-which .tf-kind[data-which=greedy]")
    assert cross_maps(page)["w"] > 0
    facts = page.inner_text(".tf-view")
    assert "63,121,544" in facts and "63,126,152" in facts
    assert "0.925" in facts and "0.025" in facts and "0.9" in facts
    assert "-1.22" in facts or "−1.22" in facts
    screenshot(page, f"transformer-{lang}")

    # an unknown word: refused with the lab's own sentence, nothing lost
    page.fill(".tf-text", "three banana")
    page.click(".tf-go")
    refusal = "is not a word the model knows" if lang == "en" else "不是模型认识的词"
    page.wait_for_function(f"() => document.body.innerText.includes('{refusal}')")
    assert page.locator(".tf-hyps tr").count() == 5  # the last translation stays

    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(400)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    screenshot(page, f"transformer-{lang}-phone")
    page.locator(".tf-maps[data-key=infer]").scroll_into_view_if_needed()
    screenshot(page, f"transformer-{lang}-phone-maps")


@pytest.mark.slow  # plays until the model translates the typed phrase (~a minute here)
def test_play_then_read_the_typed_phrase_translated(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=transformer&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    translate(page, "three hundred twenty one", 0)  # the training pictures follow this phrase
    right = "() => document.querySelector('.tf-example').textContent.includes('→ 三百二十一 (')"
    paused_frame = (
        "() => window.shaomai.store.get('state') === 'paused' &&"
        " document.querySelector('#view').dataset.step === String(window.shaomai.store.get('step'))"
    )
    for _ in range(5):  # the steps between a frame that got it right and the pause may not
        page.click("[data-act=play]")
        page.wait_for_function(right, timeout=240_000, polling=1000)
        page.click("[data-act=play]")
        page.wait_for_function(paused_frame)  # a pause sends its own step's picture
        if page.evaluate(right):
            break
    translate(page, "three hundred twenty one", 1)
    lines = page.inner_text(".tf-result")
    assert "Greedy: 三百二十一" in lines and "0.6): 三百二十一" in lines, lines
    assert cross_maps(page)["w"] > 0
    screenshot(page, "transformer-en-learned")
