"""Lessons (backend/lessons.py, docs/lessons.md): parsing, no raw HTML, a broken lesson listed
with its file and line, the built-in lessons' params valid for their labs and their claims
backed by the curriculum's numbers and tests, and a teacher's lesson dropped into
SHAOMAI_LESSONS_DIR listed by a live server without a restart."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from backend import lessons
from backend.labs import REGISTRY, load_all
from backend.labs.gpt import SOLVED
from tests.conftest import ROOT, start_server, stop_server
from tests.wsutil import frames, open_lab
from tests.wsutil import step as step_lab

load_all()
CURRICULUM = Path("/work/shared/CURRICULUM.md")  # the project's brief, outside the repository

GOOD = """# A lesson

```lesson
{"lab": "gpt"}
```

## First

Some *text*.

```do
open {"params": {"data": "reverse"}, "seed": 0}
play {"until": "solved", "max": 500}
select {"layer": 1, "head": 2}
highlight {"control": "play"}
```

## Second

More.
"""


def write(folder: Path, lesson_id: str, en: str, zh: str | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{lesson_id}.en.md").write_text(en, encoding="utf-8")
    (folder / f"{lesson_id}.zh.md").write_text(zh if zh is not None else en, encoding="utf-8")


def test_a_lesson_parses_into_steps_with_directives(tmp_path):
    write(tmp_path, "mine", GOOD)
    one = lessons.load("mine", tmp_path)["en"]
    assert one["title"] == "A lesson" and one["lab"] == "gpt" and len(one["steps"]) == 2
    first = one["steps"][0]
    assert first["title"] == "First" and "<em>text</em>" in first["html"]
    kinds = [d["kind"] for d in first["do"]]
    assert kinds == ["open", "play", "select", "highlight"]
    assert first["do"][0] == {
        "kind": "open",
        "lab": "gpt",
        "params": {"data": "reverse"},
        "seed": 0,
    }
    # "solved" is the lab's own condition: held-out exact-sequence accuracy above 95%
    assert first["do"][1]["until"] == {"scalar": "seq_acc", "above": SOLVED}
    assert first["do"][2] == {"kind": "select", "keys": {"layer": 1, "head": 2}}
    assert "```" not in first["html"] and "open" not in first["html"]  # directives are not text


def test_raw_html_and_script_links_are_not_rendered(tmp_path):
    evil = GOOD.replace(
        "Some *text*.",
        '<script>alert(1)</script>\n\n<img src=x onerror="alert(2)">\n\n[x](javascript:alert(3))',
    )
    write(tmp_path, "evil", evil)
    html = lessons.load("evil", tmp_path)["en"]["steps"][0]["html"]
    assert "<script" not in html and "<img" not in html and 'href="javascript' not in html
    assert "&lt;script&gt;" in html  # shown as text, not run


@pytest.mark.parametrize(
    ("change", "line", "why"),
    [
        ('{"data": "reverse"}', 12, "gpt has no param 'dataa'"),
        ('"seed": 0}', 12, "`open` seed"),
        ("play {", 13, "no directive 'plya'"),
        ('"layer": 1', 14, "view key 'layer'"),
        ('"control": "play"', 15, "`highlight` control"),
    ],
)
def test_a_bad_directive_names_the_file_and_line(tmp_path, change, line, why):
    bad = {
        '{"data": "reverse"}': '{"dataa": "reverse"}',
        '"seed": 0}': '"seed": -1}',
        "play {": "plya {",
        '"layer": 1': '"layer": 9',
        '"control": "play"': '"control": "explode"',
    }[change]
    write(tmp_path, "bad", GOOD.replace(change, bad, 1))
    with pytest.raises(lessons.LessonError) as e:
        lessons.load("bad", tmp_path)
    assert str(e.value).startswith(f"bad.en.md:{line}: ") and why in str(e.value), str(e.value)


def test_a_broken_lesson_is_listed_as_broken_beside_good_ones(tmp_path):
    write(tmp_path, "good", GOOD)
    write(tmp_path, "nojson", GOOD.replace('"seed": 0}', '"seed": 0'))
    (tmp_path / "halfway.en.md").write_text(GOOD, encoding="utf-8")  # no zh file
    write(tmp_path, "steps", GOOD, GOOD.replace("## Second\n\nMore.\n", ""))
    rows = {r["id"]: r for r in lessons.listing(tmp_path)}
    assert "error" not in rows["good"] and rows["good"]["source"] == "teacher"
    assert rows["nojson"]["error"].startswith("nojson.en.md:12: `open`: not JSON")
    assert (
        rows["halfway"]["error"]
        == "halfway.zh.md:1: missing: a lesson has an zh file beside the other"
    )
    assert "1 steps, the en file has 2" in rows["steps"]["error"]
    builtin = [r for r in rows.values() if r["source"] == "builtin"]
    assert builtin and not any("error" in r for r in builtin)


def test_every_builtin_lesson_is_valid_for_its_labs():
    rows = lessons.listing(None)
    assert len(rows) >= 6 and not [r for r in rows if "error" in r], rows
    labs = {lab for r in rows for lab in r["labs"]}
    wanted = {
        "linear-regression",
        "relu-kink",
        "gpt",
        "optimizers",
        "attention-variants",
        "real-bert",
    }
    assert wanted <= labs
    for r in rows:
        assert r["title"]["en"] != r["title"]["zh"]  # written in both languages
        for lang, one in lessons.load(r["id"], lessons.BUILTIN_DIR).items():
            for step in one["steps"]:
                for d in step["do"]:
                    if d["kind"] == "open":  # every param exists and takes that value
                        params = REGISTRY[d["lab"]].Params
                        assert set(d["params"]) <= set(params.model_fields), (r["id"], lang)
                        params.model_validate(d["params"])
                    if d["kind"] == "select":
                        assert set(d["keys"]) <= set(REGISTRY[one["lab"]].view_keys)


def test_attention_forming_asks_at_step_3_then_runs_until_solved():
    both = lessons.load("attention-forming", lessons.BUILTIN_DIR)
    for lang in ("en", "zh"):
        steps = both[lang]["steps"]
        poll = [d for d in steps[2]["do"] if d["kind"] == "poll"][0]
        # which layer carries the anti-diagonal depends on the run: the poll asks of the answer rows
        q = poll["question"]
        assert ("answer rows" in q or "答案那几行" in q) and len(poll["choices"]) == 4
        assert any("anti-diagonal" in c or "反对角线" in c for c in poll["choices"])
        right = poll["choices"][poll["answer"]]  # revealed when the poll closes
        assert "anti-diagonal" in right or "反对角线" in right
        play = [d for d in steps[3]["do"] if d["kind"] == "play"][0]
        assert play["until"] == {"scalar": "seq_acc", "above": SOLVED}


# The numbers the lessons state, each one the curriculum's (and its lab's tests').
FACTS = {
    "0.584",
    "0.292",
    "0.4",
    "0.25",
    "0.8",
    "0.5",  # linear-regression: one step, divergence
    "3.16",
    "0.001",
    "0.1",
    "0.9",
    "0.999",  # optimizers: Adam without bias correction
    "1e-3",
    "1e-8",
    "1e-6",  # torch's Adam defaults; MLA's absorbed vs explicit scores
}


def test_what_a_lesson_claims_is_what_the_curriculum_and_tests_say():
    curriculum = CURRICULUM.read_text(encoding="utf-8") if CURRICULUM.is_file() else None
    for fact in FACTS:
        if curriculum is not None:
            assert fact in curriculum, fact
    for r in lessons.listing(None):
        for lang, one in lessons.load(r["id"], lessons.BUILTIN_DIR).items():
            for step in one["steps"]:
                prose = re.sub(r"<[^>]+>", " ", step["html"])
                prose += " ".join(d.get("text", "") for d in step["do"])
                directive_values = json.dumps(step["do"])
                for num in re.findall(r"\d+\.\d+|\d+e-\d+", prose):
                    ok = num in FACTS or num in directive_values
                    assert ok, f"{r['id']}.{lang}: {num} is not a number the curriculum states"
                if "anti-diagonal" in prose or "反对角线" in prose:
                    test = (ROOT / "tests/backend/test_lab_gpt.py").read_text()
                    assert "def test_reverse_is_solved_with_an_anti_diagonal_head" in test
    if curriculum is not None:  # the relu-kink lesson's arithmetic
        assert "6x−23" in curriculum and "z=7 for x≤5" in curriculum


def test_a_dropped_in_lesson_is_listed_without_a_restart(tmp_path):
    folder = tmp_path / "teacher"
    folder.mkdir()
    proc, url, _ = start_server({"SHAOMAI_LESSONS_DIR": str(folder)}, log_name="server-lessons.log")
    try:
        get = lambda path: json.loads(urllib.request.urlopen(f"{url}{path}", timeout=30).read())  # noqa: E731
        before = get("/api/lessons")
        assert {r["source"] for r in before} == {"builtin"}
        write(folder, "my-lesson", GOOD, GOOD.replace("# A lesson", "# 我的课"))
        write(folder, "broken", GOOD.replace('"gpt"}', '"nope"}', 1))
        after = {r["id"]: r for r in get("/api/lessons")}
        mine = after["my-lesson"]
        assert mine["source"] == "teacher" and mine["title"] == {"en": "A lesson", "zh": "我的课"}
        assert mine["labs"] == ["gpt"] and mine["steps"] == 2
        assert after["broken"]["error"] == "broken.en.md:3: no lab 'nope'"
        zh = get("/api/lessons/my-lesson?lang=zh")
        assert zh["title"]["zh"] == "我的课" and zh["steps"][0]["do"][0]["kind"] == "open"
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"{url}/api/lessons/broken", timeout=30)
        with e.value:  # an HTTPError holds its socket until closed
            assert e.value.code == 422 and "broken.en.md:3" in json.loads(e.value.read())["detail"]
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"{url}/api/lessons/my-lesson?lang=fr", timeout=30)
        with e.value:
            assert e.value.code == 422 and "lang" in json.loads(e.value.read())["detail"]
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"{url}/api/lessons/none-such", timeout=30)
        with e.value:
            assert e.value.code == 404
    finally:
        stop_server(proc)


def test_the_attention_forming_answer_is_what_layer_0_learns(client):
    """The lesson marks "an anti-diagonal" right for layer 0: train its run (its `open`
    params and seed) to the step it is solved at and read layer 0's maps."""
    both = lessons.load("attention-forming", lessons.BUILTIN_DIR)
    opened = [d for st in both["en"]["steps"] for d in st["do"] if d["kind"] == "open"][0]
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "gpt", opened["params"], opened["seed"])
        f = frames(step_lab(ws, 100))[-1]
    assert f["header"]["meta"]["solved_at"] < 100
    # answer query q of a six-symbol reversal reads prompt position 13 - q
    q = np.arange(7, 13)
    layer0 = f["tensors"]["blocks.0.attn.hook_pattern"][:, q, 13 - q].mean(-1)  # [H]
    assert layer0.max() > 0.5, layer0
