"""One 'try this next' experiment: a key, a partial params dict, a label and what to watch."""

from __future__ import annotations

from typing import Any


def experiment(
    key: str, params: dict[str, Any], en: str, zh: str, watch_en: str, watch_zh: str
) -> dict:
    return {
        "key": key,
        "params": params,
        "label": {"en": en, "zh": zh},
        "watch": {"en": watch_en, "zh": watch_zh},
    }
