"""A teacher shares gpt; a phone in the class is sent only the map it shows; the teacher sees
the class's bytes/s and flips low bandwidth, which halves the phone's maps."""

import pytest

from tests.browser.shared_class import ROLE, gpt_class
from tests.conftest import ARTIFACTS, screenshot

pytestmark = pytest.mark.browser

RECEIVED = "() => window.shaomai.client.received"
RESET = (
    "() => { const r = window.shaomai.client.received; r.frames = 0; r.bytes = 0; r.tensors = {}; }"
)

KEEP_FRAMES = """() => { window._frames = [];
  window.shaomai.client.on('frame', (f) => window._frames.push({step: f.step,
    q: Array.from(f.tensors['blocks.1.attn.hook_pattern']?.q || [])})); }"""
# One [T, T] map's levels from the frame of a step, starting at `at` (head 2 of the whole).
LEVELS = "() => window._frames.find((f) => f.step === {step}).q.slice({at}, {at} + {n})"


def _frames_after_reset(student, teacher, n=2):
    student.evaluate(RESET)
    teacher.click("[data-act=step10]")
    student.wait_for_function(f"() => window.shaomai.client.received.frames >= {n}")
    return student.evaluate(RECEIVED)


def test_a_phone_gets_its_map_and_the_teacher_sees_and_lowers_the_class_bandwidth(
    live_server, browser
):
    with gpt_class(live_server, browser, "zh-CN") as (teacher, student, code, errors):
        teacher.click("[data-act=step10]")
        teacher.wait_for_function("() => window.shaomai.store.get('step') === 10")
        teacher.evaluate(
            "() => { window.shaomai.store.set('layer', 1); window.shaomai.store.set('head', 2); }"
        )

        student.goto(f"{live_server}/join/{code}")
        student.wait_for_function(ROLE.format("viewer"))
        student.wait_for_function(
            "() => window.shaomai.store.get('layer') === 1 && window.shaomai.store.get('head') === 2"
        )
        for pg in (teacher, student):  # each page's frames as its views get them
            pg.evaluate(KEEP_FRAMES)
        full = _frames_after_reset(student, teacher)
        names = set(full["tensors"])
        assert "blocks.1.attn.hook_pattern" in names and "blocks.0.attn.hook_pattern" not in names
        head = full["tensors"]["blocks.1.attn.hook_pattern"]
        T = head["shape"][-1]
        # A causal map travels as its lower triangle: T(T+1)/2 levels, not T².
        assert head["shape"] == [1, T, T] and head["bytes"] == T * (T + 1) // 2
        # ... and the phone draws the teacher's head 2, level for level, zeros above.
        at = student.evaluate("() => window._frames.at(-1).step")
        teacher.wait_for_function(f"() => window._frames.some((f) => f.step === {at})")
        mine = student.evaluate(LEVELS.format(step=at, at=0, n=T * T))
        theirs = teacher.evaluate(LEVELS.format(step=at, at=2 * T * T, n=T * T))
        assert len(mine) == T * T and mine == theirs
        assert sum(mine[i * T + j] for i in range(T) for j in range(i + 1, T)) == 0
        sl = full["slice"]
        rows = sl.pop("rows")
        pos = sl.pop("position")  # the position the phone's next-token panel shows
        # ... that token's column of the residual norms, and its scalars from their row.
        assert sl.pop("cols") == {"resid_norm": T, "embed_norm": T}
        # Its scalars: left out as the row sent before it ("row"), or the frame is the row.
        assert sl.pop("scalars", "in the frame") in ("row", "in the frame")
        assert student.evaluate(
            f"() => [...window.shaomai.client.rows.keys()].some((k) => k.endsWith(':{at}'))"
        )
        assert sl == {"layer": 1, "head": 2, "quality": "full", "scale": 1, "pooled": {}}
        # ... and only that row of its candidates: one row of next_probs, not T.
        assert rows == {"next_probs": T, "next_top": T} and 0 <= pos < T
        assert full["tensors"]["next_probs"]["shape"][0] == 1
        # The phone draws the one map it has (enlarged), at its width.
        student.wait_for_function("() => !document.querySelector('.attn-zoom').hidden")
        assert student.evaluate("() => document.documentElement.scrollWidth") <= 390

        # The teacher's figure: nonzero bytes/s to the class (from the server's class_stats).
        teacher.click("[data-act=play]")
        teacher.wait_for_function(
            "() => Number(document.querySelector('.class-tools .class-band .bw-figure')"
            ".dataset.bytesPerS) > 0"
        )
        figure = teacher.locator(".class-tools .class-band .bw-figure").inner_text()
        assert "students: 1 · the class" in figure and "B/s" in figure, figure
        teacher.click("[data-act=play]")  # pause
        teacher.wait_for_function("() => window.shaomai.store.get('state') !== 'playing'")

        # Low bandwidth: the phone resubscribes; its map comes at half resolution.
        teacher.locator(".class-tools .class-band input").check()
        student.wait_for_function("() => window.shaomai.store.get('low') === true")
        student.wait_for_function(
            "() => { const s = window.shaomai.client.subscription; return s && s.quality === 'low'; }"
        )
        low = _frames_after_reset(student, teacher, 1)
        pat = low["tensors"]["blocks.1.attn.hook_pattern"]
        half = (T + 1) // 2
        assert pat["shape"] == [1, half, half] and pat["bytes"] < head["bytes"]
        assert low["slice"]["quality"] == "low" and low["slice"]["scale"] == 2
        student.wait_for_function("() => !document.querySelector('.attn-zoom').hidden")
        assert student.evaluate("() => document.documentElement.scrollWidth") <= 390
        screenshot(student, "class-bandwidth-student-phone-zh")

        # The share panel with the figure and the switch: en desktop, then zh on a phone.
        teacher.click("[data-act=share_class]")
        teacher.wait_for_selector(".share-overlay:not([hidden]) .share-card .class-band")
        teacher.wait_for_function("() => !document.querySelector('.share-card .class-band').hidden")
        screenshot(teacher, "class-bandwidth-share-en-desktop")
        # A teacher on a phone, in Chinese (a reload at that width rejoins as the driver).
        teacher.set_viewport_size({"width": 390, "height": 844})
        teacher.reload()
        teacher.wait_for_function(ROLE.format("driver"))
        teacher.evaluate("() => document.querySelector('#lang-btn').click()")
        # At phone width the selected head opens enlarged over the page: close it, as a
        # teacher would, to reach the share button.
        teacher.click(".attn-zoom:not([hidden]) .mg-close")
        teacher.click("[data-act=share_class]")
        teacher.wait_for_function(
            "() => document.querySelector('.share-card .bw-low').textContent === '低带宽模式'"
            " && !document.querySelector('.share-card .class-band').hidden"
        )
        teacher.wait_for_function(
            "() => Number(document.querySelector('.share-card .bw-figure').dataset.bytesPerS) >= 0"
        )
        assert teacher.locator(".share-card .class-band input").is_checked()  # low stays on
        screenshot(teacher, "class-bandwidth-share-zh-phone-page")
        teacher.evaluate(
            "() => { const c = document.querySelector('.share-card'); c.scrollTop = c.scrollHeight; }"
        )
        teacher.screenshot(path=str(ARTIFACTS / "class-bandwidth-share-zh-phone.png"))  # the screen
        assert teacher.evaluate("() => document.documentElement.scrollWidth") <= 390
        assert not errors, errors
