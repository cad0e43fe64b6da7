"""Somewhere to type a code (issue 12): /join is a page with a code field, and a wrong or
ended code answers a page in the reader's language (?lang=, else Accept-Language), not
`{"detail": ...}` JSON."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from backend.app import create_app
from backend.config import Settings
from tests.wsutil import open_lab, recv_until, send

ZH = {"accept-language": "zh-CN,zh;q=0.9,en;q=0.8"}
EN = {"accept-language": "en-GB,en;q=0.9,zh;q=0.5"}


def _html(r, status: int) -> str:
    assert r.status_code == status, r.text[:300]
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert '<form class="join-form" action="/join" method="get">' in r.text
    assert re.search(r'<input id="join-code" name="code"', r.text)
    return r.text


@pytest.fixture
def app_client(tmp_path):
    with TestClient(create_app(Settings(data_dir=tmp_path, autosave_s=0))) as c:
        yield c


def test_join_is_a_page_with_a_code_field_in_the_readers_language(app_client):
    c = app_client
    zh = _html(c.get("/join", headers=ZH), 200)
    assert '<html lang="zh-CN">' in zh and "加入课堂" in zh and "课堂码" in zh
    en = _html(c.get("/join", headers=EN), 200)
    assert '<html lang="en">' in en and "Join a class" in en and "Class code" in en
    assert "Join a class" in _html(c.get("/join"), 200)  # no header: English
    # ?lang= wins over the browser's language; the form keeps it.
    forced = _html(c.get("/join?lang=en", headers=ZH), 200)
    assert "Join a class" in forced and '<input type="hidden" name="lang" value="en">' in forced
    assert "加入课堂" in _html(c.get("/join/", params={"lang": "zh"}), 200)
    assert '"detail"' not in zh + en


def test_a_wrong_or_ended_code_is_a_sentence_in_the_readers_language(app_client):
    c = app_client
    zh = _html(c.get("/join/ZZZZZZ", headers=ZH), 404)
    assert "没有课堂码为 ZZZZZZ 的课堂" in zh and 'value="ZZZZZZ"' in zh
    en = _html(c.get("/join/zzzzzz?lang=en", headers=ZH), 404)
    assert "No class has the code ZZZZZZ" in en
    # BADCOD: O is in no code (look-alike letters are left out): the same sentence
    assert "No class has the code BADCOD" in _html(c.get("/join/BADCOD", headers=EN), 404)
    typed = _html(c.get("/join", params={"code": "k7m", "lang": "en"}), 422)
    assert "A class code has 6 letters and digits" in typed and "“k7m”" in typed
    # typed into the field: the same answers through /join?code=
    assert "没有课堂码" in _html(c.get("/join", params={"code": "ZZZZZZ"}, headers=ZH), 404)
    # an ended class: the code answered once, then its session closed
    with c.websocket_connect("/ws") as teacher:
        open_lab(teacher, "linear-regression")
        send(teacher, {"type": "share"})
        code = recv_until(teacher, lambda m: m["type"] == "shared")[0]["code"]
        assert c.get(f"/join/{code}", follow_redirects=False).status_code == 303
    manager = c.app.state.sessions
    for s in list(manager.sessions.values()):
        c.portal.call(manager.close, s)
    assert f"No class has the code {code}" in _html(c.get(f"/join/{code}", headers=EN), 404)


def test_a_right_code_typed_in_the_field_opens_the_class_in_that_language(app_client):
    c = app_client
    with c.websocket_connect("/ws") as teacher:
        open_lab(teacher, "linear-regression")
        send(teacher, {"type": "share"})
        code = recv_until(teacher, lambda m: m["type"] == "shared")[0]["code"]
        typed = f" {code[:3].lower()}-{code[3:]} "  # by hand: case, a dash, spaces
        r = c.get("/join", params={"code": typed, "lang": "zh"}, follow_redirects=False)
        assert r.status_code == 303
        assert r.headers["location"] == f"/lab.html?lab=linear-regression&join={code}&lang=zh"
        r = c.get(f"/join/{code}", follow_redirects=False)  # the QR link: as before
        assert r.headers["location"] == f"/lab.html?lab=linear-regression&join={code}"


def test_too_many_wrong_codes_answer_a_page_too(tmp_path):
    settings = Settings(data_dir=tmp_path, join_attempts_per_min=2, autosave_s=0)
    with TestClient(create_app(settings)) as c:
        c.app.state.sessions.shared.clock = lambda: 1000.0  # no turn comes back in the test
        c.app.state.sessions.join_turns.wait_s = 0  # and none is waited for
        for wrong in ("ZZZZZZ", "XXXXXX"):  # distinct: a code asked again is answered free
            _html(c.get(f"/join/{wrong}", headers=ZH), 404)
        zh = _html(c.get("/join?code=YYYYYY", headers=ZH), 429)
        assert "输错了很多次课堂码" in zh
        en = _html(c.get("/join/YYYYYY?lang=en"), 429)
        assert "Many wrong codes came from this network" in en
        # the QR route keeps its documented JSON problem
        qr = c.get("/api/join/YYYYYY/qr.svg")
        assert qr.status_code == 429 and set(qr.json()) == {"detail"}
