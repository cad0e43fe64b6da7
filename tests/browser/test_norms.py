"""The `norms` lab in a real Chromium: four placements step side by side (curves, the
waterfall, per-layer gradients at init and now, logits, entropies, the cited 222.2); the
try bar switches to QK-norm off vs on and the cap appears; en + zh, desktop and a 390×844
phone without sideways scroll."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
FRAME = "() => document.querySelector('#view').dataset.step !== undefined"


def traces(page, panel: int) -> list[str]:
    """Trace names of the view's own per-layer chart number `panel` (0 grad, 1 logit, 2 entropy)."""
    return page.evaluate(
        f"""() => {{ const own = [...document.querySelectorAll('.norms-view .dash-grid > .panel')]
          .filter((p) => !p.classList.contains('dash-chart') && !p.classList.contains('dash-waterfall')
            && !p.classList.contains('dash-readout'));
          const d = own[{panel}].querySelector('.chart').data; return d ? d.map((t) => t.name) : []; }}"""
    )


def phone(page, name: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(400)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    screenshot(page, name)


def test_norms_placements_and_qk_norm_in_english(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=norms&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    page.wait_for_function("() => document.querySelector('#view').dataset.arms")
    assert page.get_attribute("#view", "data-arms") == "pre,post,OLMo-2,sandwich"
    story = page.inner_text(".norms-story")  # read off the run, not stated (page claims)
    assert "Read off this run" in story and "without QK-norm" in story
    page.click("[data-act=step10]")
    page.wait_for_function("() => document.querySelector('#view').dataset.step === '10'")
    page.wait_for_function(
        "() => document.querySelector('.norms-cited').textContent.includes('222.2')"
    )
    grad = traces(page, 0)
    assert "pre · init" in grad and "post · now" in grad
    # Logits are measured at evaluations (every 20 steps): at step 10 the "Now" panel shows
    # the one at step 0, saying so, not a dash.
    now = page.inner_text(".norms-view .dash-readout")
    assert "pre · largest logit" in now and "(step\u00a00)" in now and "–" not in now
    assert traces(page, 2)[-1] == "uniform"
    assert not any("cap" in n for n in traces(page, 1))  # no QK-norm: no cap drawn
    screenshot(page, "norms-en")
    page.click("[data-act=try-qk]")
    page.wait_for_function("() => window.shaomai.store.get('params').compare === 'qk_norm'")
    page.wait_for_function(
        "() => document.querySelector('#view').dataset.arms === 'QK-norm off,QK-norm on'"
    )
    page.click("[data-act=step10]")
    page.wait_for_function("() => document.querySelector('#view').dataset.step === '10'")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.norms-view .chart')].some((c) => (c.data || [])"
        ".some((t) => t.name === 'QK-norm on · QK-norm cap'))"
    )
    screenshot(page, "norms-en-qk")
    phone(page, "norms-en-phone")


def test_norms_in_chinese(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=norms&lang=zh")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    page.click("[data-act=step10]")
    page.wait_for_function("() => document.querySelector('#view').dataset.step === '10'")
    text = page.inner_text(".norms-view")
    assert "以下从本次训练读出" in text and "没有 QK-norm" in text and "每层的注意力熵" in text
    assert "（第\u00a00\u00a0步）" in page.inner_text(".norms-view .dash-readout")
    page.wait_for_function(
        "() => document.querySelector('.norms-cited').textContent.includes('编码器第 4 层')"
    )
    screenshot(page, "norms-zh")
    phone(page, "norms-zh-phone")
