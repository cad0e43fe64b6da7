"""The catalog: the chapters still to come are named (derived from the labs the server sends,
against the curriculum's chapter titles), and importing a run is a labelled button."""

import json

import pytest

from tests.conftest import screenshot

pytestmark = pytest.mark.browser


def to_come(page):
    page.wait_for_selector("#chapters .card")
    return page.eval_on_selector_all("#to-come li", "els => els.map((e) => e.textContent)")


def test_chapters_still_to_come_follow_the_server_labs(live_server, page):
    page.goto(f"{live_server}/?lang=en")
    built = {
        lab["chapter"] for lab in page.evaluate("() => fetch('/api/labs').then(r => r.json())")
    }
    later = to_come(page)
    assert all(f"Chapter {n} ·" not in " ".join(later) for n in built)  # a built one never
    assert len(later) == 8 - len(built & set(range(1, 9)))
    screenshot(page, "catalog-en")

    # The same page with chapters 5 and 6 missing from the server's list: both are to come.
    def drop_chapters(route):
        labs = [lab for lab in json.loads(route.fetch().text()) if lab["chapter"] not in (5, 6)]
        route.fulfill(status=200, content_type="application/json", body=json.dumps(labs))

    page.route("**/api/labs", drop_chapters)
    page.goto(f"{live_server}/?lang=zh")
    later = to_come(page)
    assert "第 6 章 · 注意力与 Transformer" in later and "第 5 章 · 序列" in later
    assert page.inner_text("#to-come h2") == "尚未上线的章节"
    page.unroute("**/api/labs")
    page.goto(f"{live_server}/?lang=en")
    if not to_come(page):  # every chapter has labs: no heading over an empty list
        assert not page.is_visible("#to-come h2")
    else:
        assert page.inner_text("#to-come h2") == "Chapters still to come"


@pytest.mark.parametrize("lang,words", [("en", "Import a run"), ("zh", "导入训练")])
def test_import_is_a_labelled_button(live_server, page, lang, words):
    page.goto(f"{live_server}/?lang={lang}")
    label = page.locator(".saved-runs label.import")
    label.wait_for()
    assert words in label.inner_text()
    box = label.bounding_box()
    assert box["height"] >= 44  # a button's size, tappable
    style = page.eval_on_selector(
        ".saved-runs label.import",
        """(el) => { const s = getComputedStyle(el), i = el.querySelector('input[type=file]');
          const r = i.getBoundingClientRect(), b = el.getBoundingClientRect();
          return {border: s.borderTopStyle, opacity: getComputedStyle(i).opacity,
                  inside: r.left >= b.left - 1 && r.right <= b.right + 1}; }""",
    )
    # The bare browser widget ("Choose file · No file chosen") is not shown; the label is.
    assert style["border"] == "solid" and style["opacity"] == "0" and style["inside"]
    assert page.get_by_label(words).count() == 1  # the file input is named by the label
    if lang == "en":
        page.set_viewport_size({"width": 390, "height": 844})
        screenshot(page, "catalog-phone-en")


CARDS = """() => [...document.querySelectorAll('#lessons .lesson-card')].map((c) => ({
  id: c.dataset.lesson, source: c.dataset.source, href: c.getAttribute('href'),
  title: c.querySelector('.lesson-title').textContent,
  badge: c.querySelector('.lesson-source').textContent,
  meta: c.querySelector('.lesson-meta')?.textContent, error: c.querySelector('.lesson-error')?.textContent}))"""


def test_the_catalog_lists_the_lessons_in_en_and_zh(live_server, page):
    page.goto(f"{live_server}/?lang=en")
    page.wait_for_selector("#lessons .lesson-card")
    listed = page.evaluate("() => fetch('/api/lessons').then(r => r.json())")
    cards = {c["id"]: c for c in page.evaluate(CARDS)}
    assert set(cards) == {r["id"] for r in listed} and len(cards) >= 7
    a = cards["attention-forming"]
    assert a["title"] == "Attention forming in a tiny GPT" and a["badge"] == "Built in"
    assert a["href"] == "/lab.html?lesson=attention-forming&lang=en"
    assert a["meta"].startswith("Lab: GPT") and a["meta"].endswith("5 steps")
    assert page.inner_text("#lessons h2") == "Lessons"
    screenshot(page, "catalog-lessons-en")

    page.click("#lang-btn")  # the switch relabels the lessons and their links
    page.wait_for_function("() => document.querySelector('#lessons h2').textContent === '课程'")
    z = {c["id"]: c for c in page.evaluate(CARDS)}["attention-forming"]
    assert z["title"] == "小 GPT 里注意力如何成形" and z["badge"] == "内置"
    assert z["href"].endswith("lang=zh") and z["meta"].endswith("共 5 步")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    screenshot(page, "catalog-lessons-zh-phone")

    page.click("#lessons [data-lesson=gradient-descent]")  # the lesson's lab, in zh
    page.wait_for_function("() => document.querySelector('.lesson-panel')?.dataset.step === '0'")
    assert "lab=linear-regression" in page.url
    assert "梯度下降与学习率" in page.inner_text(".lesson-panel")
