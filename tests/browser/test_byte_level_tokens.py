"""Chinese read whole in every token view of a byte-level tokenizer (real Chromium, real model).

`real-llm` asked 中国的首都是哪里？ in zh and en: the prompt strip, the answer, the candidates,
the logit lens, the enlarged attention map's column labels (drawn on a canvas: every
fillText is recorded) and its hover tips show the characters, never U+FFFD; a token that
holds part of a character is marked as a piece of it, with its bytes on hover; the page says
the tokenizer is byte-level and SmolLM2 was trained mostly on English. The `tokenizer` lab
(character-level pieces) shows the same question and an emoji whole. Screenshots en + zh,
desktop and a 390x844 phone, land in tests/artifacts/.
"""

from __future__ import annotations

import pytest

from tests.conftest import ARTIFACTS, screenshot

pytestmark = pytest.mark.browser

QUESTION = "中国的首都是哪里？"
BAD = "\ufffd"
READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
DONE = "() => document.querySelector('#view').dataset.done === '1'"
# Every text a canvas draws (the attention map's labels), and every answer strip drawn while
# the tokens streamed in (a token may end mid-character until the next one arrives).
RECORD = """
window.__canvasText = [];
const fill = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
  window.__canvasText.push(String(text));
  return fill.call(this, text, ...rest);
};
window.__answers = [];
new MutationObserver(() => {
  const a = document.querySelector('.rl-answer');
  if (a && a.childElementCount) window.__answers.push([...a.children].map((c) => [c.textContent, c.className]));
}).observe(document, { childList: true, subtree: true });
"""
CHIPS = """(sel) => [...document.querySelectorAll(sel)].map((c) => ({
  text: c.firstChild ? c.firstChild.textContent : c.textContent, title: c.title,
  cls: c.className, mark: (c.querySelector('.tp-k') || {}).textContent || '' }))"""
NOTES = {
    "en": ("byte-level BPE", "3 bytes", "trained mostly on English"),
    "zh": ("字节级 BPE", "3 个字节", "主要用英文"),
}


def ask(pg, max_new: int = 6) -> None:
    pg.wait_for_function(READY)
    pg.fill("textarea[name=prompt]", QUESTION)
    pg.fill("input[name=max_new]", str(max_new))
    pg.click(".rl-go")
    pg.wait_for_function(DONE, timeout=300_000)  # the first generation loads the model


def tips_over_zoom(pg) -> list[str]:
    """Hover a grid of points over the enlarged map; the tips that showed."""
    box = pg.locator(".rl-view .mg-zoom canvas").bounding_box()
    seen = []
    for fy in (0.2, 0.35, 0.5, 0.65):
        for k in range(1, 30):
            pg.mouse.move(box["x"] + box["width"] * k / 30, box["y"] + box["height"] * fy)
            tip = pg.locator(".rl-view .mg-tip")
            if tip.is_visible():
                seen.append(tip.inner_text())
    return seen


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_real_llm_shows_chinese_characters_whole(live_server, page, lang):
    page.add_init_script(RECORD)
    page.goto(f"{live_server}/lab.html?lab=real-llm&lang={lang}")
    ask(page)
    prompt = page.evaluate(CHIPS, ".rl-prompt-toks .rl-tok")
    answer = page.evaluate(CHIPS, ".rl-answer .rl-tok")
    texts = [c["text"] for c in prompt + answer]
    assert not [t for t in texts if BAD in t], texts
    for ch in "中国首都":
        assert any(c["text"] == ch for c in prompt), (ch, [c["text"] for c in prompt])
    # 国 is two tokens: both show 国, marked 1/2 and 2/2, its bytes on hover
    guo = [c for c in prompt if c["text"] == "国"]
    assert [c["mark"] for c in guo] == ["1/2", "2/2"] and all("tp-split" in c["cls"] for c in guo)
    assert "E5 9B BD" in guo[0]["title"] and "E5 9B" in guo[0]["title"]
    assert [c["mark"] for c in prompt if c["text"] == "首"] == ["1/3", "2/3", "3/3"]
    zhong = next(c for c in prompt if c["text"] == "中")
    assert "E4 B8 AD" in zhong["title"] and not zhong["mark"]  # one whole token
    assert any(c["text"] == "<|im_start|>" and c["title"] == "<|im_start|>" for c in prompt)
    # every answer strip drawn while streaming: no U+FFFD (a pending piece shows its bytes)
    streamed = page.evaluate("() => window.__answers")
    assert streamed and not [a for a in streamed if any(BAD in text for text, _ in a)], streamed
    for strip in streamed:  # only the newest tokens may wait for the rest of a character
        pending = [i for i, (_, cls) in enumerate(strip) if "tp-pending" in cls]
        assert pending == list(range(len(strip) - len(pending), len(strip))), strip
        assert all(strip[i][0].startswith("<") for i in pending), strip
    # candidates and the logit lens
    bars = page.inner_text(".rl-view .prob-bars") + page.inner_text(".rl-view .rl-lens")
    assert BAD not in bars
    # the page says what the tokenizer does and what the model was trained on
    note = page.inner_text(".rl-bytes")
    assert all(s in note for s in NOTES[lang]), note
    # the attention map enlarged: its column labels (canvas) and hover tips
    page.evaluate("() => { window.__canvasText = []; window.shaomai.store.set('layer', 1); }")
    page.wait_for_function("() => window.__canvasText.some((t) => t === '国')")
    drawn = page.evaluate("() => window.__canvasText")
    assert not [t for t in drawn if BAD in t], drawn
    assert all(ch in drawn for ch in "中国的首都"), drawn
    tips = tips_over_zoom(page)
    assert tips and not [t for t in tips if BAD in t], tips
    assert any(any(ch in t for ch in QUESTION) for t in tips), tips
    page.keyboard.press("Escape")
    screenshot(page, f"byte-tokens-{lang}")
    ask_panel = page.locator(".rl-view .panel", has=page.locator(".rl-prompt-toks"))
    ask_panel.screenshot(path=str(ARTIFACTS / f"byte-tokens-{lang}-ask.png"))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_real_llm_chinese_on_a_phone(live_server, browser, lang):
    ctx = browser.new_context(
        viewport={"width": 390, "height": 844}, locale="zh-CN" if lang == "zh" else "en-US"
    )
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    pg.goto(f"{live_server}/lab.html?lab=real-llm&lang={lang}")
    ask(pg, max_new=4)
    strip = pg.inner_text(".rl-prompt-toks") + pg.inner_text(".rl-answer")
    assert BAD not in strip and all(ch in strip for ch in "中国首都")
    assert pg.evaluate("() => document.documentElement.scrollWidth") <= 390
    pg.locator(".rl-prompt-toks").scroll_into_view_if_needed()
    screenshot(pg, f"byte-tokens-{lang}-phone")
    ask_panel = pg.locator(".rl-view .panel", has=pg.locator(".rl-prompt-toks"))
    ask_panel.screenshot(path=str(ARTIFACTS / f"byte-tokens-{lang}-phone-ask.png"))
    # another question: its own strip, nothing left of the Chinese one
    pg.evaluate("() => { document.querySelector('#view').dataset.done = ''; }")
    pg.fill("textarea[name=prompt]", "Hello there, friend!")
    pg.fill("input[name=max_new]", "1")
    pg.click(".rl-go")
    pg.wait_for_function(DONE, timeout=120_000)
    strip = pg.inner_text(".rl-prompt-toks")
    assert "friend" in strip and not any(ch in strip for ch in QUESTION), strip
    assert pg.locator(".rl-prompt-toks .tp-split").count() == 0
    ctx.close()
    assert not errors, errors


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_tokenizer_lab_shows_the_question_and_an_emoji_whole(live_server, page, lang):
    page.goto(f"{live_server}/lab.html?lab=tokenizer&lang={lang}")
    page.wait_for_function(READY)
    page.fill("#param-sample", QUESTION + " 😀")
    page.dispatch_event("#param-sample", "change")
    chips = (
        """() => [...document.querySelectorAll('.tok-cut .tok-chip b')].map((b) => b.textContent)"""
    )
    page.wait_for_function(f"() => ({chips})().includes('😀')")
    pieces = page.evaluate(chips)
    assert not [p for p in pieces if BAD in p], pieces
    # each piece is whole characters of the sample (or the unknown piece): no mojibake
    sample = QUESTION + " 😀"
    odd = [p for p in pieces if p != "<unk>" and not all(c in sample + "␣▁" for c in p)]
    assert not odd, pieces
    assert "的" in pieces and "😀" in "".join(pieces)
    assert BAD not in page.inner_text("#view")
    screenshot(page, f"byte-tokens-tokenizer-{lang}")
