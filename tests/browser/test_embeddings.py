"""The `embeddings` lab in a real Chromium: the static numbers, the learner's table edit and
picked row, play moving the learned scatter until the sentence marks sit together, a
picked character's neighbours; en + zh, desktop and a 390×844 phone (no sideways scroll)."""

import pytest

from tests.conftest import ARTIFACTS, screenshot

pytestmark = pytest.mark.browser

READY = "() => window.shaomai && window.shaomai.store.get('role') === 'driver'"
FRAME = "() => document.querySelector('#view').dataset.step !== undefined"
WIDTH = "() => document.documentElement.scrollWidth"


def cells(page, selector: str) -> list[list[str]]:
    return page.evaluate(
        f"""() => [...document.querySelector({selector!r}).querySelectorAll('tr')].slice(1)
        .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))"""
    )


def phone(page, name: str) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(400)
    assert page.evaluate(WIDTH) <= 390, page.evaluate(WIDTH)
    screenshot(page, name)
    for part in ("emb-pictures", "emb-wide"):  # the parts at a readable size, to look at
        page.locator(f".{part}").first.screenshot(path=str(ARTIFACTS / f"{name}-{part}.png"))


def test_embeddings_in_english(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=embeddings&lang=en")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    ids = page.inner_text(".emb-ids")
    assert "id(苹果) + id(香蕉) = 1 + 2 = 3 = id(梨)" in ids
    assert "苹果 apple = 1" in ids
    hot = page.locator(".emb-mats").first.locator("figure")
    assert hot.count() == 3
    gram = cells(page, ".emb-mats figure:nth-of-type(2) table")
    assert gram == [["1", "0", "0"], ["0", "1", "0"], ["0", "0", "1"]]
    cos = cells(page, ".emb-wide .emb-mats figure:nth-of-type(2) table")  # the table's cosines
    assert cos[1][3] == "0.999" and cos[0][1] == "0.781" and cos[0][2] == "0.743"
    assert cos[1][2] == "0.163"

    # Pick 梨: one-hot [0, 1, 0, 0], the row of E highlighted, the product is that row.
    page.click(".emb-word[data-word='1']")
    page.wait_for_function(
        "() => document.querySelector(\".emb-word[data-word='1']\").getAttribute('aria-pressed') === 'true'"
    )
    product = page.locator(".emb-product figure")
    assert cells(page, ".emb-product figure:nth-of-type(1) table") == [["0", "1", "0", "0"]]
    assert "focus" in product.nth(1).locator("tr").nth(2).get_attribute("class")
    assert cells(page, ".emb-product figure:nth-of-type(3) table") == [["0.9", "0.05"]]
    assert "max |one-hot · E − E[1]| = 0" in page.inner_text(".emb-wide:has(.emb-product)")

    # Edit 梨's tech to 0.9: the server's cosines change (苹果–梨 rises).
    table = page.locator(".emb-wide .emb-mats figure").first
    table.locator("td").nth(3).click()
    page.keyboard.press("Control+A")
    page.keyboard.type("0.9")
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.shaomai.store.get('params').table[1][1] === 0.9")
    page.wait_for_function(
        "() => document.querySelector('.emb-wide .emb-mats figure:nth-of-type(2) table')"
        ".querySelectorAll('tr')[1].querySelectorAll('td')[1].textContent !== '0.781'"
    )
    assert cells(page, ".emb-wide .emb-mats figure:nth-of-type(2) table")[0][1] == "0.998"

    # Play: the character model trains; its points move and the marks come together.
    page.click("[data-act=play]")
    page.wait_for_function(
        "() => Number(document.querySelector('#view').dataset.step) >= 150", timeout=120_000
    )
    page.click("[data-act=play]")
    page.wait_for_selector(".emb-finding.ok")
    found = page.inner_text(".emb-findings")
    assert "sit together" in found and "the sentence marks 。 ， ： ？" in found
    data = page.evaluate("() => document.querySelector('.emb-scatter .chart').data[0]")
    assert len(data["x"]) == len(data["text"]) > 20 and "。" in data["text"]
    # Pick ， (as a click on its point does): its neighbours by the server's cosine.
    page.evaluate(
        "() => document.querySelector('.emb-scatter .chart').emit('plotly_click', {points: [{customdata: '，'}]})"
    )
    page.wait_for_function("() => window.shaomai.store.get('params').probe === '，'")
    page.wait_for_function(
        "() => document.querySelector('.emb-side h3').textContent.includes('“，”')"
    )
    assert page.locator(".emb-near li").count() == 8
    curves = page.evaluate(
        "() => [...document.querySelectorAll('.dash-chart .chart')].map((c) => c.data.map((d) => d.name))"
    )
    assert ["marks with marks", "marks with letters"] in curves
    screenshot(page, "embeddings-en")
    phone(page, "embeddings-en-phone")


def test_embeddings_in_chinese_on_english_text(live_server, page):
    page.goto(f"{live_server}/lab.html?lab=embeddings&lang=zh&text=en")
    page.wait_for_function(READY)
    page.wait_for_function(FRAME)
    page.click("[data-act=step10]")
    page.wait_for_function("() => document.querySelector('#view').dataset.step === '10'")
    view = page.inner_text(".emb-view")
    assert "编号会凭空造出顺序" in view and "二维词表（甜, 科技）" in view
    assert "元音" in page.inner_text(".emb-findings")
    assert "apple" not in page.inner_text(".emb-ids")
    data = page.evaluate("() => document.querySelector('.emb-scatter .chart').data[0]")
    assert "e" in data["text"] and "␣" in data["text"]
    screenshot(page, "embeddings-zh")
    phone(page, "embeddings-zh-phone")
