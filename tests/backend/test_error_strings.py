"""Every engine message key the server can send has its string in both languages.

A refusal carries `key` (and `values`) so the page shows it in the learner's language; a
key with no string falls back to the English message, which a Chinese classroom would
read. The `err.*` keys are found in the backend's source, so a new refusal cannot forget
them. (A lab's own keys, `<lab>.err_*`, live in its view's strings; its tests read them.)
"""

from __future__ import annotations

import json
import re

from tests.conftest import ROOT

# key="err.x", or a SessionError's fourth argument "err.x"
KEY = re.compile(r'"(err\.[a-z_]+)"')


def test_every_error_key_has_a_zh_and_an_en_string():
    keys = set()
    for path in (ROOT / "backend").rglob("*.py"):
        keys |= set(KEY.findall(path.read_text(encoding="utf-8")))
    assert len(keys) > 15  # the scan finds them (21 when written)
    for lang in ("en", "zh"):
        table = json.loads((ROOT / "frontend" / "i18n" / f"{lang}.json").read_text("utf-8"))
        missing = sorted(k for k in keys if not table.get(k))
        assert not missing, f"{lang}.json lacks {missing}"
        for k in keys:  # every {placeholder} is one the server fills
            assert "{" not in table[k] or re.findall(r"\{(\w+)\}", table[k]), k
