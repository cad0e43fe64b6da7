"""A teacher drops a lesson into SHAOMAI_LESSONS_DIR while the server runs: the catalog lists
it on a reload (a broken one with its error, not a link), and a learner alone takes it in zh:
the lab opens with its params, a step's note shows, its poll asks them to predict, and "Run
it" shows the run's true value beside their guess (docs/lessons.md, docs/polls.md)."""

import pytest

from tests.browser.test_lessons import AT_STEP, ROLE, watch
from tests.conftest import screenshot, start_server, stop_server

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(300)]
WAIT = {"timeout": 60_000}  # a deadline for a loaded 2-core machine, not a speed check

LESSON = """# {title}

```lesson
{{"lab": "linear-regression"}}
```

## {first}

{body}

```do
open {{"params": {{"dataset": "two-points", "loss": "half_mse", "lr": 0.05}}, "seed": 0}}
note {{"text": "{note}"}}
highlight {{"param": "lr"}}
```

## {second}

```do
poll {{"question": "{question}", "numeric": {{"metric": "loss", "step": 5}}}}
```
"""
EN = dict(title="A dropped-in lesson", first="Start slow", body="The learning rate is 0.05.",
          note="Watch the learning rate field.", second="Predict",
          question="What is the loss at step 5?")  # fmt: skip
ZH = dict(title="临时放进来的课", first="慢慢开始", body="学习率是 0.05。",
          note="留意学习率这一栏。", second="预测", question="第 5 步的损失是多少？")  # fmt: skip
CARD = "#lessons [data-lesson=dropped-in]"


@pytest.fixture
def teacher_server(tmp_path):
    folder = tmp_path / "teacher-lessons"
    folder.mkdir()
    env = {
        "SHAOMAI_LESSONS_DIR": str(folder),
        "SHAOMAI_MAX_SESSIONS_PER_IP": "1000",
        "SHAOMAI_SESSIONS_PER_IP_PER_MIN": "10000",
    }
    proc, url, _ = start_server(env, log_name="server-lesson-dropin.log")
    try:
        yield url, folder
    finally:
        stop_server(proc)


def test_a_dropped_in_lesson_runs_in_the_browser_without_a_restart(teacher_server, browser):
    url, folder = teacher_server
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    pg = watch(ctx.new_page())
    try:
        pg.goto(f"{url}/?lang=en")
        pg.wait_for_selector("#lessons .lesson-card", **WAIT)
        assert pg.locator(CARD).count() == 0
        assert pg.locator("#lessons [data-source=teacher]").count() == 0

        (folder / "dropped-in.en.md").write_text(LESSON.format(**EN), encoding="utf-8")
        (folder / "dropped-in.zh.md").write_text(LESSON.format(**ZH), encoding="utf-8")
        (folder / "half-done.en.md").write_text("# Half done\n\n## A step\n", encoding="utf-8")
        pg.reload()
        pg.wait_for_selector(CARD, **WAIT)
        assert pg.inner_text(f"{CARD} .lesson-title") == "A dropped-in lesson"
        assert pg.inner_text(f"{CARD} .lesson-source") == "Your lesson"
        assert pg.inner_text(f"{CARD} .lesson-meta").endswith("2 steps")
        broken = pg.locator("#lessons [data-lesson=half-done]")
        assert broken.evaluate("e => e.tagName") == "DIV"  # not a dead link
        assert "half-done.en.md" in broken.inner_text()
        assert "cannot be opened" in broken.inner_text()
        pg.click("#lang-btn")
        pg.wait_for_function(
            f"() => document.querySelector('{CARD} .lesson-title').textContent === '临时放进来的课'"
        )
        assert pg.inner_text(f"{CARD} .lesson-source") == "你的课程"
        screenshot(pg, "lesson-dropin-catalog-zh")

        pg.click(CARD)  # the lab opens with the lesson's params, in zh
        pg.wait_for_function(ROLE.format("driver"), **WAIT)
        pg.wait_for_function(AT_STEP.format(0), **WAIT)
        assert "lab=linear-regression" in pg.url
        pg.wait_for_function("() => window.shaomai.store.get('params').lr === 0.05", **WAIT)
        assert pg.inner_text(".lesson-note") == "留意学习率这一栏。"
        assert "学习率是 0.05" in pg.inner_text(".lesson-panel")

        pg.keyboard.press("PageDown")  # the poll step: a learner alone predicts
        pg.wait_for_function(AT_STEP.format(1), **WAIT)
        alone = ".poll-panel[data-mode=alone]"
        pg.wait_for_selector(f"{alone} .poll-guess input:not([disabled])", **WAIT)
        assert pg.inner_text(f"{alone} .poll-q") == "第 5 步的损失是多少？"
        pg.fill(".poll-guess input", "2")
        pg.click(".poll-guess button")  # send
        pg.wait_for_selector(f"{alone} .poll-mine", **WAIT)
        screenshot(pg, "lesson-dropin-poll-zh-before")
        pg.click(f"{alone} [data-act='poll.run_it']")
        pg.wait_for_selector(f"{alone} .poll-truth-text", **WAIT)
        assert "第 5 步" in pg.inner_text(".poll-truth-text")
        assert pg.inner_text(".poll-verdict").startswith("你的预测 2 与实际值相差")
        screenshot(pg, "lesson-dropin-poll-zh-after")
        assert not pg.errors, pg.errors
    finally:
        ctx.close()
