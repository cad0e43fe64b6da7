"""Learner tools in a real Chromium (docs/learner-tools.md): an attention cell's arithmetic
from the live model, the charts' cursor following the timeline, exact values and presets in
the params form, reset to defaults, the `?` keyboard help; a zh phone without sideways scroll."""

import re

import pytest

from tests.browser.settle import settle
from tests.browser.test_gpt import ready, shown_step
from tests.conftest import ARTIFACTS, screenshot

pytestmark = pytest.mark.browser

# The step charts' cursor: for every plotly chart over steps, the x of its 'viewing' line.
CURSORS = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter((el) => el.layout && el.layout.xaxis && el.layout.xaxis.title
    && el.layout.xaxis.title.text === 'step')
  .map((el) => { const s = (el.layout.shapes || []).find((x) => x.name === 'viewing');
    return s ? s.x0 : null; })"""


def open_zoom_and_click_a_cell(page) -> dict:
    """Enlarge layer 1 head 0's map, click a cell below its diagonal; the tip's numbers."""
    page.evaluate(
        "() => { window.shaomai.store.set('layer', 1); window.shaomai.store.set('head', 0); }"
    )
    page.wait_for_selector(".attn-zoom:not([hidden])")
    box = page.locator(".attn-zoom canvas").bounding_box()
    x, y = box["x"] + box["width"] * 0.45, box["y"] + box["height"] * 0.8
    page.mouse.move(x, y)
    page.wait_for_selector(".attn-tip:not([hidden])")
    tip = page.inner_text(".attn-tip")
    m = re.search(r"L(\d+) H(\d+) · .* \((\d+)\) → .* \((\d+)\) · ([0-9.]+)", tip)
    assert m, tip
    page.mouse.click(x, y)
    page.wait_for_selector(".cell-arith:not([hidden])")
    page.wait_for_function(
        "() => document.querySelector('.cell-arith').dataset.weight !== undefined"
    )
    layer, head, row, col = (int(v) for v in m.groups()[:4])
    return {"layer": layer, "head": head, "row": row, "col": col, "value": float(m.group(5))}


def test_cell_arithmetic_matches_the_map_and_cursor_follows_the_scrubber(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=gpt&lang=en")
    ready(page)
    page.click("[data-act=step10]")
    shown_step(page, 10)
    page.click("[data-act=step10]")
    shown_step(page, 20)
    hit = open_zoom_and_click_a_cell(page)
    assert hit["layer"] == 1 and hit["head"] == 0 and hit["row"] >= hit["col"]
    panel = page.locator(".cell-arith")
    text = panel.inner_text()
    weight = float(panel.get_attribute("data-weight"))
    # the server's softmax is the map's value at that cell (u8 on the wire: within 1/255)
    assert abs(weight - float(panel.get_attribute("data-map-value"))) <= 0.5 / 255 + 1e-6
    assert abs(weight - hit["value"]) <= 0.5 / 255 + 5e-4  # the tip prints 3 digits
    assert f"({hit['row']}) → key" in text and "q · k" in text and "√d_head = ÷ √16" in text
    assert "step 20, the step the map shows" in text
    assert "causal mask" in text and "softmax over row" in text
    screenshot(page, "learner-cell-en")

    # Scrub back to step 5: every step chart draws its cursor there, and follows to 8.
    page.keyboard.press("Escape")
    page.wait_for_selector(".attn-zoom", state="hidden")
    for s in (5, 8):
        page.eval_on_selector(
            ".scrubber input", f"e => {{ e.value = {s}; e.dispatchEvent(new Event('input')); }}"
        )
        shown_step(page, s)
        page.wait_for_function(
            f"() => {{ const c = ({CURSORS})(); return c.length && c.every((x) => x === {s}); }}"
        )
    # The map now shows step 8; a cell asked now says its numbers are the model's at step 20.
    open_zoom_and_click_a_cell(page)
    assert "model now (step 20); the map shows step 8" in page.inner_text(".cell-arith")
    page.keyboard.press("Escape")
    page.click(".scrubber .live")
    page.wait_for_function(f"() => ({CURSORS})().every((x) => x === null)")
    # The timeline row stays in view on a tall page: scrolled to the top, it is on screen.
    page.evaluate("() => window.scrollTo(0, 0)")
    settle(page, ".timeline-row")
    r = page.locator(".timeline-row").bounding_box()
    assert page.evaluate("() => document.documentElement.scrollHeight > window.innerHeight")
    assert r["y"] >= 0 and r["y"] + r["height"] <= 1000 + 0.5


def echoed_lr(page, value: float) -> None:
    page.wait_for_function(
        f"() => Math.abs(window.shaomai.store.get('params').lr - {value}) < 1e-12"
    )


def test_exact_values_presets_reset_and_keyboard_help(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=gpt&lang=en")
    ready(page)
    default_lr = page.evaluate("() => window.shaomai.store.get('params').lr")
    # A value outside the schema's bounds: a clear message, nothing sent.
    page.fill("#param-lr-exact", "5")
    page.press("#param-lr-exact", "Enter")
    err = page.locator("#param-lr-exact-error")
    assert err.is_visible() and "from 1e-5 to 0.1" in err.inner_text().replace("1e-05", "1e-5")
    assert page.get_attribute("#param-lr-exact", "aria-invalid") == "true"
    page.fill("#param-lr-exact", "abc")
    page.press("#param-lr-exact", "Enter")
    assert "Type a number" in err.inner_text()
    assert page.evaluate("() => window.shaomai.store.get('params').lr") == default_lr
    # An exact value (not a slider stop): the server echoes it, the box shows it.
    page.fill("#param-lr-exact", "0.000377")
    page.press("#param-lr-exact", "Enter")
    echoed_lr(page, 0.000377)
    assert err.is_hidden()
    page.locator("body").click(position={"x": 5, "y": 5})
    assert page.input_value("#param-lr-exact") == "0.000377"
    # A preset, then reset to defaults.
    page.click(".param .presets button[data-preset='0.001']")
    echoed_lr(page, 0.001)
    page.fill("#param-n_heads-exact", "2")
    page.press("#param-n_heads-exact", "Enter")
    page.wait_for_function("() => window.shaomai.store.get('params').n_heads === 2")
    page.click(".reset-defaults")
    echoed_lr(page, default_lr)
    page.wait_for_function("() => window.shaomai.store.get('params').n_heads === 4")
    assert page.input_value("#param-n_heads-exact") == "4"

    # `?` opens the keyboard help (not while typing in a box); Escape closes it.
    page.focus("#param-lr-exact")
    page.keyboard.press("?")
    assert page.is_hidden("#shortcut-help")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("?")
    page.wait_for_selector("#shortcut-help[open]")
    text = page.inner_text("#shortcut-help")
    for words in ("Play or pause", "Presenter mode", "Blank the screen", "PageDown", "Shift"):
        assert words in text
    page.keyboard.press("Escape")
    page.wait_for_selector("#shortcut-help", state="hidden")


def test_zh_phone_tools_fit_without_sideways_scroll(live_server, browser):
    ctx = browser.new_context(
        viewport={"width": 390, "height": 844}, locale="zh-CN", has_touch=True, is_mobile=True
    )
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{live_server}/lab.html?lab=gpt&lang=zh")
        ready(page)
        page.click("[data-act=step10]")
        shown_step(page, 10)
        hit = open_zoom_and_click_a_cell(page)
        panel = page.locator(".cell-arith")
        assert "注意力权重" in panel.inner_text()
        assert abs(float(panel.get_attribute("data-weight")) - hit["value"]) <= 0.5 / 255 + 5e-4
        settle(page, ".cell-arith")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        screenshot(page, "learner-cell-zh-phone")
        page.screenshot(path=str(ARTIFACTS / "learner-cell-zh-phone-view.png"))  # what the eye sees
        page.click(".cell-arith .ca-close")
        page.keyboard.press("Escape")
        page.wait_for_selector(".attn-zoom", state="hidden")
        page.evaluate(
            "() => { const d = document.querySelector('#params-box'); if (d) d.open = true; }"
        )
        page.locator("#param-lr-exact").scroll_into_view_if_needed()
        assert page.is_visible("#param-lr-exact") and page.is_visible(".reset-defaults")
        assert "参数恢复默认" in page.inner_text(".reset-defaults")
        settle(page, "#params-box")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        screenshot(page, "learner-form-zh-phone")
        page.keyboard.press("?")
        page.wait_for_selector("#shortcut-help[open]")
        assert "键盘快捷键" in page.inner_text("#shortcut-help")
        settle(page, "#shortcut-help")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        page.keyboard.press("Escape")
        page.wait_for_selector("#shortcut-help", state="hidden")
        assert not errors, errors
    finally:
        ctx.close()
