"""The `gpt` lab in a real Chromium: it trains, the attention grid redraws, the scrubber moves
back to step 5 and the grid changes, `infer` prints tokens; text mode, the leak, zh."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

# A checksum of the attention canvas's pixels: equal pictures, equal sums.
GRID = """() => { const c = document.querySelector('.attn-main');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let h = 0;
  for (let i = 0; i < d.length; i += 4) h = (h * 31 + d[i] + 7 * d[i + 1] + 13 * d[i + 2]) >>> 0;
  return h; }"""


def ready(page) -> None:
    page.wait_for_function("() => window.shaomai && window.shaomai.store.get('role') === 'driver'")
    page.wait_for_function("() => document.querySelector('#view').dataset.step !== undefined")


def shown_step(page, step: int) -> None:
    page.wait_for_function(f"() => document.querySelector('#view').dataset.step === '{step}'")


def shown_after(page, step: int) -> None:
    page.wait_for_function(f"() => Number(document.querySelector('#view').dataset.step) >= {step}")


def generate(page) -> list[str]:
    """Press Generate and return the new tokens once the last one has arrived."""
    page.click(".gen-go")
    page.wait_for_function("() => document.querySelector('.gen-go').disabled")
    page.wait_for_function("() => !document.querySelector('.gen-go').disabled", timeout=30_000)
    return page.eval_on_selector_all(".gen-text .gtok.new", "els => els.map(e => e.textContent)")


def test_gpt_trains_redraws_scrubs_back_and_generates(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=gpt&lang=en")
    ready(page)
    assert page.inner_text("#lab-title") == "GPT: train a tiny decoder live"
    shown_step(page, 0)
    at_start = page.evaluate(GRID)
    page.click("[data-act=step10]")  # ten steps, a frame each: the timeline holds steps 1..10
    shown_step(page, 10)
    assert page.evaluate(GRID) != at_start  # the grid redrew

    # Play the default reverse task to its end (300 steps; solved at about step 40).
    page.click("[data-act=play]")
    page.wait_for_function("() => window.shaomai.store.get('state') === 'done'", timeout=120_000)
    # Frames go out at most 30 a second: the last one drawn may be a step or two before 300.
    shown_after(page, 280)
    assert page.is_visible(".gpt-solved")
    assert "Solved" in page.inner_text(".gpt-solved")
    live = page.evaluate(GRID)
    screenshot(page, "gpt-en")

    # Hover a cell of the first map: the query token lights up in the token strip.
    box = page.locator(".attn-main").bounding_box()
    page.mouse.move(box["x"] + 60, box["y"] + 60)
    page.wait_for_function("() => document.querySelector('.token-strip .tok.hot') !== null")
    assert not page.is_hidden(".attn-tip")
    page.mouse.click(box["x"] + 60, box["y"] + 60)  # enlarge it
    page.wait_for_selector(".attn-zoom:not([hidden])")
    screenshot(page, "gpt-zoom")
    page.keyboard.press("Escape")
    page.wait_for_selector(".attn-zoom", state="hidden")

    # Scrub back to step 5: the grid shows that step's (still uniform) attention.
    page.eval_on_selector(
        ".scrubber input", "e => { e.value = 5; e.dispatchEvent(new Event('input')); }"
    )
    page.wait_for_function("() => document.querySelector('#frame-step').textContent === '5'")
    shown_step(page, 5)
    assert page.evaluate(GRID) != live
    page.click(".scrubber .live")
    shown_after(page, 280)

    # Generate from the example's prompt: the solved model writes the reverse, one token a
    # frame, the cache growing a row per token.
    prompt = page.input_value(".gpt-gen-form textarea")
    assert prompt.startswith("<s>") and prompt.endswith("|")
    tokens = generate(page)
    assert "".join(tokens) == prompt[3:-1][::-1]
    assert page.inner_text(".kv-rows .kv-n >> nth=0") == str(8 + len(tokens) - 1)
    assert page.is_visible(".gen-att canvas")
    screenshot(page, "gpt-generated")

    page.click("#lang-btn")
    page.wait_for_function(
        "() => document.querySelector('#lab-title').textContent.includes('解码器')"
    )
    assert "注意力" in page.inner_text(".gpt-view")
    screenshot(page, "gpt-zh")


def test_a_refused_prompt_is_explained_in_the_page_language(live_server, page):
    """The server names its error (key + values): a Chinese page shows the Chinese text."""
    page.goto(f"{live_server}/lab.html?lab=gpt&lang=zh")
    ready(page)  # the first frame fills the form with an example prompt: type after it
    page.fill(".gpt-gen-form textarea", "<s>01Z|")
    page.click(".gen-go")
    page.wait_for_selector("#toast:not([hidden])")
    assert "“Z” 不是这个任务的符号" in page.inner_text("#toast")
    screenshot(page, "gpt-refused-prompt-zh")


def test_gpt_text_generation_and_the_leak(live_server, page):
    # Small text params through the URL keep this bounded (the default text batch is 64 × 64).
    page.goto(f"{live_server}/lab.html?lab=gpt&lang=zh&data=text-zh&n_ctx=32&batch=8")
    ready(page)
    page.click("[data-act=step10]")
    shown_step(page, 10)
    assert page.is_hidden(".gpt-leak")
    assert page.inner_text(".gpt-sample pre")  # what the model writes now
    tokens = generate(page)
    prompt_tokens = page.eval_on_selector_all(".gen-text .gtok.prompt", "els => els.length")
    assert len(tokens) == 32 - 3 and prompt_tokens == 3  # 小烧麦, then up to n_ctx
    rows = page.inner_text(".kv-rows .kv-n >> nth=0")
    assert rows == str(prompt_tokens + len(tokens) - 1)  # one row per token fed
    screenshot(page, "gpt-text-zh")

    # The leak: turn the mask off; the banner explains, the last run's curve stays dashed.
    page.click(".gpt-sample button")
    page.wait_for_function("() => window.shaomai.store.get('params').causal === false")
    page.wait_for_selector(".gpt-leak:not([hidden])")
    page.click("[data-act=step10]")
    shown_step(page, 10)
    names = page.evaluate(
        "() => document.querySelectorAll('#view .panel .chart')[0].data.map(d => d.name)"
    )
    assert any("因果掩码" in n for n in names)  # "上一次运行（因果掩码: 开）"
    assert page.inner_text(".gpt-sample pre.prev")
    screenshot(page, "gpt-leak-zh")


def test_my_pasted_text_waits_for_the_text_and_a_long_paste_is_counted(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=gpt&lang=zh")
    ready(page)
    page.select_option("#param-data", "text-pasted")
    page.wait_for_timeout(500)
    # The box shows and waits (nothing sent, nothing refused, the choice stays).
    assert page.is_visible("#param-pasted")
    assert page.input_value("#param-data") == "text-pasted"
    assert page.is_hidden("#toast")
    assert "至少 100" in page.inner_text(".params .wait")
    # 342 KB of Chinese: counted in bytes, refused here with the limit, the text kept.
    big = "小烧麦" * 38_000
    page.fill("#param-pasted", big)
    page.dispatch_event("#param-pasted", "change")
    assert "200,000" in page.inner_text(".params .count.over")
    assert len(page.input_value("#param-pasted")) == len(big)
    assert page.is_hidden("#toast")
    screenshot(page, "gpt-paste-zh")
    text = "一只小烧麦走进了厨房，它看见锅里的水开了。" * 8
    page.fill("#param-pasted", text)
    page.dispatch_event("#param-pasted", "change")
    page.wait_for_function("() => window.shaomai.store.get('params').data === 'text-pasted'")
    assert page.evaluate("() => window.shaomai.store.get('params').pasted.length") == len(text)
