"""The `seq2seq` lab in a real Chromium: press play and the attention arm's alignment on the
reversal example forms an anti-diagonal while the context-vector arm stalls on long inputs;
the teacher-forcing pairs of 今天天气真好; the learner's own string and a refused one; en + zh,
desktop and a 390×844 phone with no sideways scroll."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
FRAME = "() => document.querySelector('#view').dataset.step !== undefined"
AT = "(s) => document.querySelector('#view').dataset.step === s"


def phone(page, name: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(400)
    screenshot(page, name)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # no sideways scroll


@pytest.mark.slow  # trains both arms for 300 updates
def test_attention_aligns_and_the_context_vector_stalls_in_english(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=seq2seq&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    pairs = page.evaluate(
        "() => [...document.querySelectorAll('.s2s-pair')].map((li) => li.dataset.pair)"
    )
    assert pairs[:6] == ["<s>→今", "今→天", "天→天", "天→气", "气→真", "真→好"]
    assert "both 天 are id 4" in page.inner_text(".s2s-worked")
    page.click("[data-act=play]")
    page.wait_for_function(
        "() => +document.querySelector('#view').dataset.step >= 300", timeout=240_000
    )
    page.click("[data-act=play]")  # pause
    page.wait_for_function("() => !document.querySelector('.s2s-antidiag-held').hidden")
    held = page.inner_text(".s2s-antidiag-held")
    assert int(held.split("%")[0]) > 50, held  # most rows on the anti-diagonal
    traces = page.evaluate(
        "() => document.querySelector('.s2s-bylen .chart').data.map((d) => [d.name, d.y])"
    )
    (ctx_name, ctx), (att_name, att) = traces
    assert (ctx_name, att_name) == ("One context vector", "Bahdanau attention")
    assert att[-1] > ctx[-1] + 0.5 and ctx[0] > ctx[-1]  # the bottleneck on long inputs
    assert page.locator(".s2s-align canvas.mg-main").count() == 1
    names = page.evaluate(
        "() => document.querySelector('.dash-chart .chart').data.map((tr) => tr.name)"
    )
    assert names[:2] == ["One context vector", "Bahdanau attention"]
    screenshot(page, "seq2seq-en")
    page.fill(".s2s-input", "hello")
    page.click(".s2s-run")
    page.wait_for_function("() => document.querySelector('#view').dataset.probe === 'hello'")
    assert page.locator(".s2s-probe-out .s2s-decoded").count() == 2
    assert page.locator(".s2s-probe canvas.mg-main").count() == 1
    screenshot(page, "seq2seq-en-probe")
    phone(page, "seq2seq-en-phone")


def test_seq2seq_in_chinese_with_a_refused_string(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=seq2seq&lang=zh")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    page.click("[data-act=step10]")
    page.wait_for_function(AT, arg="10")
    page.click("[data-act=step10]")
    page.wait_for_function(AT, arg="20")
    text = page.inner_text(".s2s-view")
    assert "教师强制：今天天气真好" in text and "对齐矩阵" in text
    assert "writes" not in text and "Teacher" not in text  # no English left in the view
    rows = page.locator(".s2s-steps tbody tr")
    assert rows.count() == 2 * 11  # two arms × (10 characters + EOS)
    page.fill(".s2s-input", "abc今")
    page.click(".s2s-run")
    page.wait_for_function("() => !document.querySelector('#toast').hidden")
    assert "不在这个任务的字符表里：今" in page.inner_text("#toast")
    page.fill(".s2s-input", "abcdef")
    page.click(".s2s-run")
    page.wait_for_function("() => document.querySelector('#view').dataset.probe === 'abcdef'")
    assert "写出" in page.inner_text(".s2s-probe-out")
    screenshot(page, "seq2seq-zh")
    phone(page, "seq2seq-zh-phone")


def test_dates_task_from_the_link(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=seq2seq&lang=en&task=dates")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    assert page.evaluate("() => window.shaomai.store.get('params').task") == "dates"
    page.click("[data-act=step10]")
    page.wait_for_function(AT, arg="10")
    assert "3 May 2021 → 2021-05-03" in page.inner_text(".s2s-align")
    assert page.locator(".s2s-antidiag").is_hidden()  # the mirror count is reversal's
    page.fill(".s2s-input", "2021年5月3日")
    page.click(".s2s-run")
    page.wait_for_function("() => document.querySelector('#view').dataset.probe === '2021年5月3日'")
    out = page.inner_text(".s2s-probe-out")
    assert out.count("✓") + out.count("right: 2021-05-03") == 2, out  # the answer is known
    screenshot(page, "seq2seq-dates-en")
    phone(page, "seq2seq-dates-en-phone")
