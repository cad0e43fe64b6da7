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


def test_unknown_keys_in_a_link_are_named_and_the_lab_runs(live_server, page):
    """A key the lab does not know (`foo`, a misspelt `n_layer`) is named in one note in the
    page's language, with the key it most likely meant; the known keys still apply."""
    page.goto(f"{live_server}/lab.html?lab=gpt&lang=en&foo=1&n_layer=2&seq_len=6&layer=1")
    opens_and_steps(page)
    assert page.evaluate("() => window.shaomai.store.get('params').seq_len") == 6
    note = page.locator("#notes [data-note=link-unknown]")
    assert note.count() == 1
    text = note.inner_text()
    assert "“foo”" in text and "“n_layer” (did you mean “n_layers”?)" in text
    assert "ignored" in text
    for known in ("seq_len", "layer", "lang", "lab"):  # keys the page understands: not named
        assert f"“{known}”" not in text
    assert "foo=" not in page.url and "n_layer=" not in page.url
    screenshot(page, "bad-link-unknown-en")
    page.click("#lang-btn")  # the note follows the language
    page.wait_for_function(
        "() => document.querySelector('[data-note=link-unknown]').textContent.includes('不认识')"
    )
    assert "你是想写“n_layers”吗" in note.inner_text()


def test_unknown_key_note_in_chinese(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=mlp-playground&lang=zh&hiden=4&colour=red")
    opens_and_steps(page)
    text = page.inner_text("#notes [data-note=link-unknown]")
    assert "“hiden”（你是想写“hidden”吗？）" in text and "“colour”" in text
    screenshot(page, "bad-link-unknown-zh")
