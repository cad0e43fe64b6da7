"""The `kv-cache` lab in a real Chromium: the Qwen3-0.6B figures drawn, a slider that moves
them, a live decode whose measured bytes per token equal the config's; en + zh, desktop and
a 390×844 phone."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
FRAME = "() => document.querySelector('#view').dataset.step !== undefined"


def bytes_per_token(page) -> dict[str, str]:
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.kv-table tbody tr')].map(
        (tr) => [tr.dataset.arm, tr.querySelector('.kv-bpt b').textContent]))"""
    )


def article(page) -> dict[str, str]:
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.kv-article dd')].map(
        (dd) => [dd.dataset.arm, dd.firstChild.textContent]))"""
    )


@pytest.mark.slow  # plays the whole decode: 60 steps of four 28-layer models
def test_kv_cache_figures_a_slider_and_a_live_decode(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=kv-cache&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    assert bytes_per_token(page) == {
        "mha": "224 KiB",
        "gqa": "112 KiB",
        "mqa": "14 KiB",
        "mla": "31.5 KiB",
    }
    assert page.inner_text(".kv-table tr[data-arm=gqa] .kv-full_context") == "4.375 GiB"
    art = article(page)
    assert art["gqa"] == "5.34 GiB" and art["mha"] == "10.7 GiB"
    assert "× 2 of GQA" in page.inner_text(".kv-article dd[data-arm=mha]")
    assert "596,049,920 parameters" in page.inner_text(".kv-shape")
    assert "2 × 8 × 128 × 28 layers × 2 bytes = 114,688 B = 112 KiB" in page.inner_text(
        ".kv-formula"
    ).replace("GQA: ", "")

    # Play: four small models decode a token a step; their caches hold the computed bytes.
    page.click("[data-act=play]")
    page.wait_for_function("() => window.shaomai.store.get('state') === 'done'", timeout=60_000)
    page.wait_for_function("() => document.querySelector('#view').dataset.step === '60'")
    facts = page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.kv-col')].map((c) => [
        c.dataset.arm, [c.querySelector('.kv-facts').dataset.rows,
        c.querySelector('.kv-facts dd:last-child').textContent]]))"""
    )
    assert facts == {
        "mha": ["64", "224 KiB = the config"],
        "gqa": ["64", "112 KiB = the config"],
        "mqa": ["64", "14 KiB = the config"],
        "mla": ["64", "31.5 KiB = the config"],
    }
    # the bytes chart has every step of every arm (plotly arrives lazily)
    page.wait_for_function(
        "() => { const d = document.querySelector('.kv-view .panel:last-child .chart').data;"
        " return d && d.length === 4 && d[1].x.length === 61; }"
    )
    screenshot(page, "kv-cache-en")

    # A slider: 4 KV heads halve GQA's cache (a rebuild: the live decode starts again).
    page.eval_on_selector(
        "#param-n_kv_heads", "e => { e.value = '4'; e.dispatchEvent(new Event('change')); }"
    )
    page.wait_for_function(
        "() => document.querySelector('.kv-table tr[data-arm=gqa] .kv-bpt b').textContent"
        " === '56 KiB'"
    )
    assert page.inner_text(".kv-table tr[data-arm=gqa] .kv-name b") == "GQA-4"
    assert "(changed)" in page.inner_text(".kv-shape")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(300)  # the grid reflows
    screenshot(page, "kv-cache-en-phone")


def test_kv_cache_in_chinese(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=kv-cache&lang=zh")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    assert "每个 token 的 KV 缓存" in page.inner_text(".kv-view")
    assert bytes_per_token(page)["gqa"] == "112 KiB"
    page.click("[data-act=step10]")
    page.wait_for_function("() => document.querySelector('#view').dataset.step === '10'")
    assert "= 配置" in page.inner_text(".kv-col[data-arm=mla] .kv-facts")
    screenshot(page, "kv-cache-zh")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(300)
    screenshot(page, "kv-cache-zh-phone")
