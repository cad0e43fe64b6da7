"""A refused param value is explained in the page's language: the server sends the reason as a
key and values (tests/backend/test_refusal_reasons.py), the page fills its own sentence."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/shots/H4")
DRIVER = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
REASON = {
    "en": "16 query heads do not split into groups of 3 KV heads",
    "zh": "16 个查询头不能平均分给 3 个 KV 头",
}
GENERIC = {"en": "the lab cannot run with it", "zh": "本实验不能用这个值运行"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_refused_value_names_its_reason_in_the_page_language(live_server, page, lang):
    # A link whose values do not fit together: the note says why, the lab opens on defaults.
    page.goto(f"{live_server}/lab.html?lab=kv-cache&lang={lang}&n_heads=16&n_kv_heads=3")
    page.wait_for_function(DRIVER)
    page.wait_for_function("() => document.querySelector('#notes').textContent.length > 0")
    notes = page.inner_text("#notes")
    assert REASON[lang] in notes and GENERIC[lang] not in notes, notes
    # A change the server refuses while the lab runs: the toast names the control and why.
    page.evaluate(
        "() => window.shaomai.client.send({type: 'set', params: {n_heads: 16, n_kv_heads: 3}})"
    )
    page.wait_for_function("() => !document.querySelector('#toast').hidden")
    toast = page.inner_text("#toast")
    assert REASON[lang] in toast and GENERIC[lang] not in toast, toast
    label = {"en": "KV heads (GQA)", "zh": "KV 头数（GQA）"}[lang]
    assert label in toast, toast
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, size in (("desktop", (1440, 900)), ("phone", (390, 844))):
        page.set_viewport_size({"width": size[0], "height": size[1]})
        page.screenshot(path=str(SHOTS / f"refusal-{lang}-{name}.png"))
