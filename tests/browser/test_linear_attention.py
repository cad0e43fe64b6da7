"""The `linear-attention` lab in a real Chromium: on opening, three computations of one
output agree to six decimals for every recurrent arm; the decode's bytes (softmax grows,
the states stay); the overwrite demo; play, and the delta arm answers rebound keys with
their last value. en + zh, desktop and a 390×844 phone, no sideways scroll."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
FRAME = "() => document.querySelector('#view').dataset.step !== undefined"


def forms(page) -> dict[str, dict]:
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.la-form')].map((b) => [
        b.dataset.arm, {rows: [...b.querySelectorAll('tr')].map((tr) =>
          [...tr.children].map((c) => c.textContent)),
          agree: b.querySelector('.la-diff').dataset.agree}]))"""
    )


def phone(page, name: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(400)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, name)


@pytest.mark.slow  # plays the default 300 steps of four arms
def test_three_forms_agree_to_six_decimals_and_the_delta_arm_recalls(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=linear-attention&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    got = forms(page)
    assert list(got) == ["Linear", "Delta", "SSM"]
    assert [r[0] for r in got["Linear"]["rows"]] == ["parallel", "recurrent", "chunked"]
    assert [r[0] for r in got["SSM"]["rows"]] == ["recurrence", "convolution", "scan"]
    for arm, f in got.items():
        assert f["agree"] == "true", arm
        numbers = [r[1:] for r in f["rows"]]
        assert all(len(n[0].split(".")[1]) == 6 for n in numbers)  # printed to six decimals
        assert numbers[0] == numbers[1] == numbers[2], (arm, numbers)
    assert "agree to six decimals" in page.inner_text(".la-forms")
    cache = page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.la-cache-table tr[data-arm]')]
        .map((tr) => [tr.dataset.arm, [...tr.children].map((c) => c.textContent)]))"""
    )
    # 1 layer × 4 heads of 16, float32: softmax 512 B a token, 24 KiB after 48 tokens
    assert cache["Softmax"][1:4] == ["512 B", "0 B", "24 KiB"]
    assert cache["Linear"][1:4] == ["0 B", "4.25 KiB", "4.25 KiB"]
    assert cache["SSM"][1:4] == ["0 B", "2 KiB", "2 KiB"]
    page.wait_for_function("() => document.querySelector('.la-cache .chart').data")  # plotly
    curves = page.evaluate(
        "() => document.querySelector('.la-cache .chart').data.map((d) => d.y.at(-1))"
    )
    assert curves == [24576, 4352, 4096, 2048]
    assert "delta: 100% of rewritten" in page.inner_text(".la-mem-acc")

    page.click("[data-act=play]")  # the default run: 300 steps
    page.wait_for_function(
        "() => window.shaomai.store.get('status') === 'done' || "
        "Number(document.querySelector('#view').dataset.step) >= 300",
        timeout=400_000,
    )
    page.wait_for_timeout(500)
    answers = page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.la-answers tr[data-arm]')]
        .map((tr) => [tr.dataset.arm, tr.children[1].textContent]))"""
    )
    delta_curve = page.evaluate(
        """() => { const c = [...document.querySelectorAll('.dash-chart .chart')][1];
        const tr = c.data.find((d) => d.name === 'Delta'); return tr.y.at(-1); }"""
    )
    assert delta_curve > 0.9, delta_curve  # tests/models/test_linear_attention.py: the same run
    assert answers["Delta"]
    screenshot(page, "linear-attention-en")
    phone(page, "linear-attention-en-phone")


def test_linear_attention_in_chinese(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=linear-attention&lang=zh")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    page.click("[data-act=step10]")
    page.wait_for_function("() => document.querySelector('#view').dataset.step === '10'")
    text = page.inner_text(".la-view")
    assert "同一个输出，三种算法" in text and "六位小数一致" in text
    assert "改写一个键：单纯累加与 delta 规则" in text
    screenshot(page, "linear-attention-zh")
    phone(page, "linear-attention-zh-phone")
