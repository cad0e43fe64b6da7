"""One byte counter serves every paste box (components/byteCounter.js): the gpt lab's pasted
text and the tokenizer's paste box count the same bytes, say the same limit in the same
sentence, and keep text over the limit in the box without sending it; en and zh."""

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"


def gpt_counter(page, base, lang, text):
    page.goto(f"{base}/lab.html?lab=gpt&lang={lang}")
    page.wait_for_function(READY)
    page.select_option("#param-data", "text-pasted")
    page.fill("#param-pasted", text)
    assert page.input_value("#param-pasted") == text  # kept, never cut
    return page.locator("#param-pasted ~ .byte-count")


def tokenizer_counter(page, base, lang, text):
    page.goto(f"{base}/lab.html?lab=tokenizer&lang={lang}")
    page.wait_for_function(READY)
    page.wait_for_function("() => document.querySelector('#view .readout dd')")
    page.fill("#tok-paste", text)
    assert page.input_value("#tok-paste") == text
    return page.locator(".tok-paste-row .byte-count")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gpt_and_tokenizer_share_one_byte_counter(live_server, page, lang):
    big = "烧" * 70_000  # 210,000 UTF-8 bytes, over the 200,000-byte limit
    small = "小烧麦 shaomai " * 20
    said = {}
    for name, open_box in (("gpt", gpt_counter), ("tokenizer", tokenizer_counter)):
        count = open_box(page, live_server, lang, big)
        assert "over" in count.get_attribute("class")
        said[name] = [count.inner_text()]
        if name == "tokenizer":  # Use: refused in the page with the counter's sentence
            page.click(".tok-paste-row button")
            assert page.inner_text(".tok-paste-verdict") == said[name][0]
        screenshot(page, f"paste-{name}-{lang}")
        box = "#param-pasted" if name == "gpt" else "#tok-paste"
        page.fill(box, small)
        assert "over" not in count.get_attribute("class")
        said[name].append(count.inner_text())
    assert said["gpt"] == said["tokenizer"]
    over, fits = said["gpt"]
    assert "210,000" in over and "200,000" in over
    assert ("Too long" in over) if lang == "en" else ("太长了" in over)
    assert fits.startswith(f"{len(small.encode()):,}")
