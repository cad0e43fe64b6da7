"""A refused param value says why in the page's language: every lab validator raises a keyed
refusal (backend.labs.base.refuse), the error on the wire carries the key and its values, and
frontend/i18n/{en,zh}.json hold the sentence for each key with the same fields."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from backend.admission import SessionError, validate_params
from backend.labs import REGISTRY, load_all
from tests.wsutil import open_lab, recv_until, send

ROOT = Path(__file__).resolve().parents[2]
LABS = ROOT / "backend" / "labs"
EN = json.loads((ROOT / "frontend/i18n/en.json").read_text(encoding="utf-8"))
ZH = json.loads((ROOT / "frontend/i18n/zh.json").read_text(encoding="utf-8"))
FIELDS = re.compile(r"\{(\w+)\}")


def fill(template: str, values: dict) -> str:
    """What the page's t(key, values) shows (frontend/js/core/i18n.js)."""
    for k, v in values.items():
        template = template.replace(f"{{{k}}}", str(v))
    return template


def refuse_keys() -> set[str]:
    """Every key a lab validator refuses with, read from the source."""
    keys: set[str] = set()
    for f in LABS.rglob("*.py"):
        for key in re.findall(r'refuse\(\s*(f?"[^"]+")', f.read_text(encoding="utf-8")):
            if key.startswith('f"'):  # err.p_cell_{what[...]}: the three things a cell names
                keys |= {re.sub(r"\{.*\}", w, key[2:-1]) for w in ("layers", "heads", "tokens")}
            else:
                keys.add(key[1:-1])
    return keys


def test_no_lab_validator_raises_a_plain_value_error():
    plain = [
        f"{f.relative_to(ROOT)}:{i}"
        for f in LABS.rglob("*.py")
        if f.name != "__init__.py"  # the registry's own check (a lab id registered twice)
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
        if "raise ValueError" in line
    ]
    assert not plain, plain


def test_every_key_has_an_en_and_a_zh_sentence_with_the_same_fields():
    keys = refuse_keys()
    assert len(keys) >= 30, keys
    for key in sorted(keys):
        assert key in EN and key in ZH, key
        assert set(FIELDS.findall(EN[key])) == set(FIELDS.findall(ZH[key])), key


# (lab, params, key, values): one bad value for each validator a session's params go through.
CASES = [
    ("kv-cache", {"n_heads": 16, "n_kv_heads": 3}, "err.p_kv_groups", {"heads": 16, "kv": 3}),
    ("attention-variants", {"d_model": 36, "n_heads": 4}, "err.p_heads_even", {"heads": 4}),
    ("attention-variants", {"n_heads": 4, "gqa_kv_heads": 3}, "err.p_gqa", {"kv": 3}),
    ("attention-variants", {"n_layers": 2, "cla_share": 3}, "err.p_cla", {"share": 3}),
    ("gpt", {"d_model": 36, "n_heads": 8}, "err.p_heads_split", {"d_model": 36, "heads": 8}),
    ("gpt", {"d_model": 24, "n_heads": 8, "positional": "rope"}, "err.p_heads_even", {}),
    ("gpt", {"d_model": 33, "n_heads": 1, "positional": "sinusoidal"}, "err.p_even_d", {}),
    ("gpt", {"data": "text-pasted", "pasted": "abc"}, "err.p_pasted_short", {"n": 3}),
    ("seq2seq", {"min_len": 8, "max_len": 6}, "err.p_len_order", {"max_len": 6, "min_len": 8}),
    ("embeddings", {"text": "pasted", "pasted": "abc"}, "err.p_pasted_short", {"n": 3}),
    ("positional-encoding", {"d_model": 33}, "err.p_even_d", {}),
    ("linear-attention", {"d_model": 36, "n_heads": 8}, "err.p_heads_split", {"heads": 8}),
    ("linear-attention", {"mem_keys": 4, "mem_rewrites": 5}, "err.p_rewrites", {"n": 5}),
    ("mlp-playground", {"x1": False, "x2": False}, "err.p_no_feature", {}),
    ("mlp-playground", {"points": [[9, 0, 0]]}, "err.p_point_outside", {"i": 0}),
    ("mlp-playground", {"points": [[0, 0, 9]]}, "err.p_point_class", {"c": 9}),
    ("linear-regression", {"points": [[200, 0]]}, "err.p_point_outside", {"hi": 100}),
    ("logistic", {"points": [[99, 0, 0]]}, "err.p_point_outside", {"i": 0}),
    ("logistic", {"points": [[0, 0, 2]]}, "err.p_point_class", {"c": 2}),
    ("real-llm", {"model": "nope"}, "err.p_no_model", {"name": "nope"}),
    ("conv", {"image": [[1, 2], [1]]}, "err.p_rows", {"name": "image"}),
    ("conv", {"kernel": [[1, 2], [1, 2], [1, 2]]}, "err.p_square", {"name": "kernel"}),
    ("attention", {"x": [[1, 2], [1]]}, "err.p_rows", {"name": "x"}),
    ("transformer", {"d_model": 33}, "err.p_even_heads", {"d_model": 33}),
    ("norms", {"d_model": 36, "n_heads": 8}, "err.p_heads_split", {"heads": 8}),
    ("positions", {"train_len": 32, "test_len": 16}, "err.p_test_len", {"train_len": 32}),
    ("positions", {"d_model": 36, "n_heads": 4}, "err.p_heads_even", {"heads": 4}),
    ("ffn-moe", {"n_experts": 2, "top_k": 3}, "err.p_top_k", {"k": 3, "n": 2}),
    ("softmax-ce", {"logits": [999, 0]}, "err.p_logit_outside", {"i": 0}),
    ("softmax-ce", {"logits": [1, 0], "target": 2}, "err.p_target", {"target": 2}),
    ("tokenizer", {"source": "pasted", "pasted": "aaaa"}, "err.p_pasted_distinct", {}),
]


@pytest.mark.parametrize(("lab", "params", "key", "values"), CASES)
def test_a_bad_value_is_refused_with_its_key_and_values(settings, lab, params, key, values):
    load_all()
    with pytest.raises(SessionError) as caught:
        validate_params(REGISTRY[lab], params, settings)
    refusal = caught.value
    assert refusal.code == "invalid_params" and refusal.key == key, (refusal.key, str(refusal))
    assert values.items() <= (refusal.values or {}).items(), refusal.values
    # The page fills the key's zh sentence: every field filled, Chinese, the values in it.
    zh = fill(ZH[key], refusal.values or {})
    assert "{" not in zh and re.search(r"[\u4e00-\u9fff]", zh), zh
    assert all(str(v) in zh for v in values.values()), zh


def test_a_zh_page_gets_the_reason_on_the_wire(client):
    """Opening with a bad value, and setting one on a running session: the error names the
    field, the key and its values; filled into zh.json's sentence it is the specific reason."""
    want = "16 个查询头不能平均分给 3 个 KV 头"
    with client.websocket_connect("/ws") as ws:
        send(ws, {"type": "open", "lab": "kv-cache", "params": {"n_heads": 16, "n_kv_heads": 3}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert (err["code"], err["field"], err["key"]) == (
            "invalid_params",
            "n_kv_heads",
            "err.p_kv_groups",
        ), err
        assert err["values"] == {"heads": 16, "kv": 3}
        assert fill(ZH[err["key"]], err["values"]).startswith(want)
        assert "16 query heads do not split into groups of 3" in err["message"]  # logs, API

    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "kv-cache", {"n_heads": 16, "n_kv_heads": 4})
        send(ws, {"type": "set", "params": {"n_kv_heads": 3}})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert (err["key"], err["values"]) == ("err.p_kv_groups", {"heads": 16, "kv": 3}), err
        assert fill(ZH[err["key"]], err["values"]).startswith(want)
