"""Issue 12's leftovers in one lab each, in a real Chromium: play/step shown by the catalog's
one rule, positional-encoding's training in the first screen, apple's hint when a raised lr
cannot diverge, honest |gradient| axes, "1 hidden layer", mlp-playground's default speed,
the network diagram inside a phone's column."""

import pytest

from tests.browser.settle import settle
from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
DRAWN = "() => window.shaomai.store.get('shownStep') !== undefined"
PHONE = {"width": 390, "height": 844}


def open_lab(page, base, lab, lang="en", extra=""):
    page.goto(f"{base}/lab.html?lab={lab}&lang={lang}{extra}")
    page.wait_for_function(READY, timeout=30_000)
    page.wait_for_function(DRAWN, timeout=30_000)


def phone_page(browser):
    ctx = browser.new_context(viewport=PHONE, locale="en-US", has_touch=True, is_mobile=True)
    return ctx, ctx.new_page()


def test_play_and_step_only_where_they_do_something(live_server, page):
    # A lab whose step only redraws the picture: no play/step, a sentence instead.
    for lab in ("softmax-ce", "activations", "real-bert"):
        open_lab(page, live_server, lab)
        assert not page.is_visible("[data-act=play]"), lab
        assert not page.is_visible("[data-act=step]"), lab
        assert page.is_visible(".controls .no-play"), lab
        assert "Nothing to play" in page.text_content(".controls .no-play")
    screenshot(page, "fixes-noplay-real-bert-en")
    # Training labs and labs whose steps walk stages keep them.
    for lab in ("linear-regression", "conv", "attention"):
        open_lab(page, live_server, lab)
        assert page.is_visible("[data-act=play]") and page.is_visible("[data-act=step]"), lab
        assert not page.is_visible(".controls .no-play"), lab
    # relu-kink: compose mode has nothing to step, fit mode trains (the rule's condition).
    open_lab(page, live_server, "relu-kink", "zh")
    assert not page.is_visible("[data-act=play]")
    assert "没有要播放的" in page.text_content(".controls .no-play")
    screenshot(page, "fixes-noplay-relu-kink-zh")
    page.select_option("#param-mode", "fit")
    page.wait_for_function("() => window.shaomai.store.get('params').mode === 'fit'")
    page.wait_for_selector("[data-act=play]", state="visible")
    assert not page.is_visible(".controls .no-play")


def test_positional_encoding_training_is_in_the_first_screen(live_server, page, browser):
    open_lab(page, live_server, "positional-encoding")
    settle(page, "#view", ".pe-train")
    top = page.evaluate("() => document.querySelector('.pe-train').getBoundingClientRect().top")
    assert top < 1000, top  # it was ~1,700 px down, after every fixed picture
    screenshot(page, "fixes-pe-desktop-en")
    ctx, ph = phone_page(browser)
    try:
        open_lab(ph, live_server, "positional-encoding", "zh")
        settle(ph, "#view", ".pe-train")
        width = ph.evaluate("() => document.documentElement.scrollWidth")
        assert width <= PHONE["width"], width  # the 3×8 matrices scroll in their own box
        top = ph.evaluate("() => document.querySelector('.pe-train').getBoundingClientRect().top")
        pe = ph.evaluate("() => document.querySelectorAll('#view .panel').length")
        assert pe > 10 and top < 3 * PHONE["height"], top
        screenshot(ph, "fixes-pe-phone-zh")
    finally:
        ctx.close()


LR_NOTE = "() => [...document.querySelectorAll('.apple-view dd, .apple-view .note')].map((e) => e.textContent).join(' | ')"


def test_apple_above_the_critical_lr_at_the_exact_optimum_says_why_and_resets(live_server, page):
    open_lab(page, live_server, "apple")
    for _ in range(8):  # 80 steps at lr 1/36: the float32 error reaches exactly 0
        before = page.evaluate("() => window.shaomai.store.get('shownStep')")
        page.click("[data-act=step10]")
        page.wait_for_function(f"() => window.shaomai.store.get('shownStep') >= {before + 10}")
    page.click(".apple-presets button:has-text('2.16')")
    page.wait_for_function("() => window.shaomai.store.get('params').lr > 0.12")
    step = page.evaluate("() => window.shaomai.store.get('shownStep')")
    page.click("[data-act=step10]")
    page.wait_for_function(f"() => window.shaomai.store.get('shownStep') >= {step + 10}")
    # x did not move (its gradient is exactly 0), and the page says why and offers Reset.
    page.wait_for_selector("button.apple-reset", state="visible")
    assert "exactly the optimum" in page.text_content(".apple-stuck")
    assert "nothing can diverge" in page.evaluate(LR_NOTE)
    screenshot(page, "fixes-apple-stuck-en")
    page.click("button.apple-reset")
    page.wait_for_function("() => window.shaomai.store.get('step') === 0")
    page.wait_for_selector("button.apple-reset", state="detached")
    # From the first guess the same lr diverges: the loss grows step after step.
    page.click("[data-act=step10]")
    page.wait_for_function("() => window.shaomai.store.get('shownStep') >= 10")
    assert "multiplies the error" in page.evaluate(LR_NOTE)


def axis_of(page, title_part):
    return page.evaluate(
        """(part) => {
          const p = [...document.querySelectorAll('.panel')].find((el) => el.querySelector('h3')?.textContent.includes(part));
          const ax = p.querySelector('.js-plotly-plot')._fullLayout.yaxis;
          return { type: ax.type, range: ax.range, title: ax.title.text };
        }""",
        title_part,
    )


def test_gradient_bars_have_a_labelled_axis_where_a_bar_length_is_honest(live_server, page):
    open_lab(page, live_server, "linear-regression")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.panel')].some((p) => p.querySelector('h3')?.textContent.includes('|gradient|')"
        " && p.querySelector('.js-plotly-plot')?.data?.[0]?.y?.length > 0)"
    )
    ax = axis_of(page, "|gradient|")
    assert ax["type"] == "linear" and ax["range"][0] == 0, ax  # b's 2.5 is 5/8 of w's 4
    assert "|gradient|" in ax["title"], ax
    open_lab(page, live_server, "live-stream", "zh")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.panel')].some((p) => p.querySelector('h3')?.textContent.includes('原始数值为什么会爆炸')"
        " && p.querySelector('.js-plotly-plot')?.data?.length > 0)"
    )
    ax = axis_of(page, "原始数值为什么会爆炸")
    assert ax["type"] == "log" and "10<sup>" in ax["title"], ax
    assert ax["range"][0] == int(ax["range"][0]), ax  # a whole decade, named in the title
    assert f"10<sup>{int(ax['range'][0])}</sup>" in ax["title"], ax
    screenshot(page, "fixes-live-stream-zh")


def test_one_hidden_layer_is_singular_and_the_default_speed_learns_at_once(live_server, page):
    open_lab(page, live_server, "mlp-playground")
    assert page.input_value("[data-act=speed]") == "2000"  # the lab's catalog play_speed
    page.wait_for_function(
        "() => document.querySelector('.nd-bar span').textContent === '2 hidden layers'"
    )
    page.click(".nd-bar button[aria-label='Remove the last hidden layer']")
    page.wait_for_function(
        "() => document.querySelector('.nd-bar span').textContent === '1 hidden layer'"
    )
    page.click("#lang-btn")
    page.wait_for_function(
        "() => document.querySelector('.nd-bar span').textContent === '1 个隐藏层'"
    )
    open_lab(page, live_server, "linear-regression")
    assert page.input_value("[data-act=speed]") == "100"


def test_network_diagram_fits_a_phone_column(live_server, browser):
    ctx, ph = phone_page(browser)
    fits = """() => {
      const d = document.querySelector('.net-diagram').getBoundingClientRect();
      const nodes = [...document.querySelectorAll('.nd-node')].map((n) => n.getBoundingClientRect());
      const heads = [...document.querySelectorAll('.nd-head')].map((h) => h.getBoundingClientRect());
      const top = Math.min(...nodes.map((r) => r.top));
      return { right: Math.max(...nodes.map((r) => r.right), ...heads.map((r) => r.right)) - d.right,
               left: d.left - Math.min(...nodes.map((r) => r.left)),
               overlap: Math.max(...heads.map((r) => r.bottom)) - top,
               side: Math.max(...heads.slice(1).map((r, i) => heads[i].right - r.left)),
               page: document.documentElement.scrollWidth };
    }"""
    try:
        for lang in ("en", "zh"):
            open_lab(ph, live_server, "mlp-playground", lang)
            ph.wait_for_selector(".nd-output")
            settle(ph, ".net-diagram", ".nd-node", ".nd-head")
            f = ph.evaluate(fits)
            assert f["right"] <= 1 and f["left"] <= 1, f  # the output column was cut off
            assert f["overlap"] <= 0, f  # the headers' 44-px buttons sat on the nodes
            assert f["side"] <= 0, f  # and on each other
            assert f["page"] <= PHONE["width"], f
            ph.evaluate("() => document.querySelector('.net-diagram').scrollIntoView()")
            screenshot(ph, f"fixes-network-phone-{lang}")
        # Six hidden layers still fit (scaled down).
        for n in range(3, 7):
            ph.click(".nd-bar button:nth-child(2)")
            ph.wait_for_function(f"() => document.querySelectorAll('.nd-head').length === {n + 2}")
        f = ph.evaluate(fits)
        assert f["right"] <= 1 and f["left"] <= 1 and f["page"] <= PHONE["width"], f
        assert f["overlap"] <= 0 and f["side"] <= 0, f
        screenshot(ph, "fixes-network-phone-six-layers")
    finally:
        ctx.close()
