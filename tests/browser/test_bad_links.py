"""A link with a value the lab cannot take opens a working lab: that field falls back to its
default, the page says which value was refused and why (in its language), the rest stays."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

DRIVER = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"


def opens_and_steps(page):
    page.wait_for_function(DRIVER)
    assert not page.is_disabled("[data-act=step]")
    page.click("[data-act=step]")
    page.wait_for_function("() => window.shaomai.store.get('step') >= 1")


def test_gpt_link_with_bad_values_falls_back_and_says_why(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=gpt&lang=en&lr=1e9&n_layers=1000&n_heads=abc&seq_len=6")
    opens_and_steps(page)
    params = page.evaluate("() => window.shaomai.store.get('params')")
    assert params["lr"] == 0.003 and params["n_layers"] == 2 and params["seq_len"] == 6
    notes = page.inner_text("#notes")
    assert (
        "“Learning rate (AdamW)” = “1e9” was not used: it must be between 0.00001 and 0.1" in notes
    )
    assert "“Layers” = “1000”" in notes and "between 1 and 6" in notes
    assert "is not a number" in notes
    assert "lr=" not in page.url and "n_layers=" not in page.url  # the link now says what runs
    screenshot(page, "bad-link-gpt-en")


def test_bad_link_in_chinese_and_a_refused_change(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=mlp-playground&lang=zh&hidden1=100000&lr=abc")
    opens_and_steps(page)
    notes = page.inner_text("#notes")
    assert "没有采用" in notes and "它不是数字" in notes
    assert "None" not in notes and "Value error" not in notes
    # A value the server refuses while running: a sentence naming the control, in zh.
    page.evaluate("() => window.shaomai.client.send({type: 'set', params: {lr: 1e9}})")
    page.wait_for_function("() => !document.querySelector('#toast').hidden")
    toast = page.inner_text("#toast")
    assert "学习率" in toast and "Input should" not in toast and "参数无效:" not in toast
    screenshot(page, "bad-link-mlp-zh")
