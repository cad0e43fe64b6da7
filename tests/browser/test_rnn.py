"""The `rnn` lab in a real Chromium: a character RNN trains on the English or Chinese story;
generation (sampled and greedy) with its candidates and memorisation meter, the hidden-state
maps, the gradient through time (plot and waterfall), the derivative plot and the norm
example; en + zh, desktop and a 390×844 phone without sideways scroll."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
AT = "(s) => document.querySelector('#view').dataset.step === s"
HAS_STEP = "() => document.querySelector('#view').dataset.step !== undefined"


def train(page, to: int) -> None:
    for s in range(10, to + 1, 10):
        page.click("[data-act=step10]")
        page.wait_for_function(AT, arg=str(s))


def generate(page, mode: str) -> str:
    page.select_option(".rnn-gen-form select[name=mode]", mode)
    page.evaluate("() => { delete document.querySelector('#view').dataset.generated; }")
    page.click(".rnn-gen-form button[type=submit]")
    page.wait_for_function("() => document.querySelector('#view').dataset.generated !== undefined")
    return page.inner_text(".rnn-gen-text")


def phone(page, name: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(400)
    screenshot(page, name)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # no sideways scroll


def test_rnn_in_english(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=rnn&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function(HAS_STEP)
    table = page.inner_text(".rnn-table")
    for number in ("14", "6", "5", "4.852", "0.8333"):
        assert number in table, (number, table)
    assert "Frobenius" in table and "max column sum" in table
    train(page, 30)
    assert "step 25" in page.inner_text(".rnn-pictures")  # the sample of the last evaluation
    assert "Longest span found verbatim" in page.inner_text(".rnn-pictures")
    page.wait_for_selector(".rnn-view .waterfall canvas.wf-canvas:not([hidden])")
    names = page.evaluate(
        "() => [...document.querySelectorAll('.rnn-plot')].map((d) => (d.data || []).map((tr) => tr.name))"
    )
    assert names == [["‖h_t‖"], ["‖∂L_T/∂h_t‖", "bound"], ["sigmoid′", "tanh′", "relu′"]]
    text = generate(page, "sample")
    assert text.startswith("The ") and len(text) > 50
    meter = page.inner_text(".rnn-gen-form ~ .rnn-meter")
    assert "Longest span found verbatim" in meter or "No generated character" in meter
    assert page.locator(".rnn-gen-text button.rnn-ch").count() == 120
    page.locator(".rnn-gen-text button.rnn-ch").nth(3).click()
    assert "character 4" in page.inner_text(".rnn-cands-title")
    page.click("[data-act=try-explode]")
    page.wait_for_function("() => window.shaomai.store.get('params').activation === 'relu'")
    page.wait_for_function(AT, arg="0")
    train(page, 10)
    assert "clipping off" in page.inner_text(".rnn-live-clip")
    screenshot(page, "rnn-en")
    phone(page, "rnn-en-phone")


def test_rnn_in_chinese(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=rnn&lang=zh")
    page.wait_for_function(READY)
    page.wait_for_function(HAS_STEP)
    page.click("[data-act=try-vanish]")  # sigmoid: the English default's story, then zh text
    page.wait_for_function("() => window.shaomai.store.get('params').activation === 'sigmoid'")
    page.wait_for_function(AT, arg="0")
    page.select_option("#param-text", "zh")
    page.wait_for_function("() => window.shaomai.store.get('params').text === 'zh'")
    page.wait_for_function(AT, arg="0")
    train(page, 20)
    pics = page.inner_text(".rnn-pictures")
    assert "训练中的样本" in pics and "隐藏状态" in pics
    assert "梯度裁剪用的是哪种范数" in page.inner_text(".rnn-view")
    page.fill(".rnn-gen-form input[name=prompt]", "小烧麦")
    text = generate(page, "greedy")
    assert text.startswith("小烧麦")
    assert "候选" in page.inner_text(".rnn-cands-title")
    screenshot(page, "rnn-zh")
    phone(page, "rnn-zh-phone")
