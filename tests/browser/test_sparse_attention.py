"""The `sparse-attention` lab in a real Chromium: the masks, reachability, accuracy by
distance and first-token table draw from the server's frame; ten steps of five arms;
en + zh, desktop and a 390×844 phone, no sideways scroll."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
FRAME = "() => document.querySelector('#view').dataset.step !== undefined"
LABELS = ["Dense", "Window", "Sinks+window", "Strided", "Block"]
SMALL = "&d_model=32&seq_len=4"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_sparse_attention_draws_masks_reach_and_sinks(live_server, page, lang):
    page.goto(f"{live_server}/lab.html?lab=sparse-attention&lang={lang}{SMALL}")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    page.click("[data-act=step10]")
    page.wait_for_function("() => document.querySelector('#view').dataset.step === '10'")
    text = page.inner_text(".sa-view")
    want = "Reachability after each layer" if lang == "en" else "每层之后的可达性"
    assert want in text
    rows = page.evaluate(
        "() => [...document.querySelectorAll('.sa-table tbody tr b')].map((b) => b.textContent)"
    )
    assert rows == LABELS
    page.wait_for_function("() => document.querySelector('.sa-dist .chart').data")
    traces = page.evaluate(
        "() => { const c = document.querySelector('.sa-dist .chart');"
        " return c && c.data ? c.data.map((d) => d.x.join()) : null; }"
    )
    assert traces == ["1,3,5,7"] * 5  # reverse of 4: sources 1, 3, 5, 7 back
    screenshot(page, f"sparse-attention-{lang}")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(400)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    screenshot(page, f"sparse-attention-{lang}-phone")


def test_the_now_panel_keeps_each_arms_loss_once_paused(live_server, page):
    """The frame sent on pause is a snapshot without the training loss; the step's row has
    it, and the readout shows it (it showed "–" for every arm)."""
    page.goto(f"{live_server}/lab.html?lab=sparse-attention&lang=en{SMALL}")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    page.click("[data-act=play]")
    page.wait_for_function("() => Number(document.querySelector('#view').dataset.step) >= 5")
    page.click("[data-act=play]")  # pause
    page.wait_for_function("() => window.shaomai.store.get('state') === 'paused'")
    page.wait_for_timeout(500)  # the pause's snapshot frame is drawn
    shown = page.evaluate(
        "() => [...document.querySelectorAll('.dash-readout dt')].map((dt) =>"
        " [dt.textContent, dt.nextElementSibling.textContent])"
    )
    losses = {k: v for k, v in shown if k.endswith("· loss")}
    assert sorted(k.split(" · ")[0] for k in losses) == sorted(LABELS), shown
    assert all(float(v) > 0 for v in losses.values()), shown
