"""Every Chinese string in the app keeps to frontend/i18n/glossary.json (one term a concept)
and writes full-width （） around Chinese text.

The strings come from everywhere a zh learner reads: frontend/i18n/zh.json; every string
literal holding Chinese in frontend/js (the views' tables, inline {zh, en} dicts), read by a
small JS tokenizer that skips comments and regexes; the lab catalog as the server sends it
(titles, descriptions, param labels and choices, try-next texts), plus every Python string
literal holding Chinese in backend/ (frame labels built at run time); lessons/*.zh.md
outside code spans (and the JSON strings of their directives: a poll's question).
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "frontend" / "i18n" / "glossary.json"
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# Where a forbidden wording means something else: the embeddings lab's items are words, so
# 词 there is a word (not a token).
WORD_IS_A_WORD = (
    "frontend/js/labs/embeddings.js",
    "backend/labs/embeddings.py",
    "catalog embeddings.",
)
EXEMPT = {"token": WORD_IS_A_WORD}


def js_strings(src: str) -> list[tuple[int, str, bool]]:
    """(offset, raw text, is_english) of each string literal's contents in JS source, the
    parts of template literals included; comments and regular-expression literals are
    skipped. A string is English where it sits under an `en` key (`en: {...}`,
    `const en = {...}`, `{zh: ..., en: '...'}`): an English sentence may quote a Chinese
    example. Raises SyntaxError where it loses its way (an unterminated string), so a parse
    that went wrong fails the test instead of hiding strings."""
    out: list[tuple[int, str, bool]] = []
    n = len(src)
    keys: list[str | None] = []  # the key each open brace was opened under
    key: list[str | None] = [None]  # the property key last seen (`name:` or `name =`)

    def is_key(j: int) -> bool:  # a `:` or a lone `=` follows
        rest = src[j : j + 3].lstrip()
        return rest[:1] == ":" or (rest[:1] == "=" and rest[1:2] not in "=>")

    def emit(i: int, j: int) -> None:
        out.append((i, src[i:j], key[0] == "en" or "en" in keys))

    def quoted(i: int, q: str) -> int:
        j = i + 1
        while src[j] != q:
            if src[j] == "\\":
                j += 1
            elif src[j] == "\n":
                raise SyntaxError(f"newline in a string at offset {i}")
            j += 1
        if is_key(j + 1):
            key[0] = src[i + 1 : j]
        else:
            emit(i + 1, j)
        return j + 1

    def template(i: int) -> int:
        j = start = i + 1
        while src[j] != "`":
            if src[j] == "\\":
                j += 2
                continue
            if src.startswith("${", j):
                emit(start, j)
                j = start = scan(j + 2, "}")
                continue
            j += 1
        emit(start, j)
        return j + 1

    def regex_end(i: int) -> int:
        j, in_class = i + 1, False
        while in_class or src[j] != "/":
            if src[j] == "\\":
                j += 1
            elif src[j] == "[":
                in_class = True
            elif src[j] == "]":
                in_class = False
            elif src[j] == "\n":
                raise SyntaxError(f"newline in a regex at offset {i}")
            j += 1
        return j + 1

    def scan(i: int, stop: str | None = None) -> int:
        depth, prev = 0, ""
        while i < n:
            c = src[i]
            if stop and c == stop and depth == 0:
                return i + 1
            if c in "'\"":
                i, prev = quoted(i, c), "x"
            elif c == "`":
                i, prev = template(i), "x"
            elif src.startswith("//", i):
                i = src.find("\n", i) if "\n" in src[i:] else n
            elif src.startswith("/*", i):
                i = src.index("*/", i) + 2
            elif c == "/" and (
                prev in ("", *"(,=:[!&|?{};+-*%<>~^")
                or re.search(r"\b(return|typeof|case|of|in)\s*$", src[max(0, i - 8) : i])
            ):
                i, prev = regex_end(i), "x"
            elif c.isalpha() or c in "_$":
                word = re.match(r"[\w$]+", src[i:])[0]
                i += len(word)
                if is_key(i):
                    key[0] = word
                prev = "x"
            else:
                if c in "{([":
                    depth += 1
                    if c == "{":
                        keys.append(key[0])
                        key[0] = None
                elif c in "})]":
                    depth -= 1
                    if c == "}" and keys:
                        keys.pop()
                elif c in ",;":
                    key[0] = None
                if not c.isspace():
                    prev = "x" if c.isdigit() else c
                i += 1
        if stop:
            raise SyntaxError(f"no closing {stop!r}")
        return i

    scan(0)
    return out


def py_strings(src: str) -> list[tuple[int, str]]:
    """(line, literal) of each Python string token that is not English (`en=...`,
    `"en": ...`, or inside brackets opened there) and not a docstring."""
    out: list[tuple[int, str]] = []
    prev: list[tokenize.TokenInfo | None] = [None, None]
    en_brackets: list[bool] = []
    skip = (tokenize.NL, tokenize.COMMENT)
    statement_start = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type in skip:
            continue
        p2, p1 = prev
        after_en = (
            p1 is not None
            and p2 is not None
            and (
                (p2.string == "en" and p1.string == "=")
                or (p2.string in ('"en"', "'en'") and p1.string == ":")
            )
        )
        in_en = after_en or (bool(en_brackets) and en_brackets[-1])
        if tok.type == tokenize.OP and tok.string in "([{":
            en_brackets.append(in_en)
        elif tok.type == tokenize.OP and tok.string in ")]}" and en_brackets:
            en_brackets.pop()
        elif tok.type == tokenize.STRING and not in_en:
            docstring = p1 is None or p1.type in statement_start
            if not docstring:
                out.append((tok.start[0], tok.string))
        prev = [p1, tok]
    return out


def _catalog_strings() -> list[tuple[str, str]]:
    """Every {"zh": ...} value in the lab catalog the server sends (try-next texts too)."""
    from backend.labs import FAILED, REGISTRY, catalog_entry, load_all
    from backend.labs.experiments import experiments_for

    load_all()
    assert not FAILED, FAILED
    found: list[tuple[str, str]] = []

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("zh"), str):
                found.append((where, node["zh"]))
            for k, v in node.items():
                walk(v, f"{where}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}[{i}]")

    for lab_id, cls in sorted(REGISTRY.items()):
        entry = {**catalog_entry(cls), "experiments": experiments_for(lab_id)}
        walk(entry, f"catalog {lab_id}")
    return found


@cache
def zh_strings() -> tuple[tuple[str, str], ...]:
    """(where, text) for every Chinese string a learner can read."""
    items: list[tuple[str, str]] = []
    zh = json.loads((ROOT / "frontend/i18n/zh.json").read_text(encoding="utf-8"))
    items += [(f"frontend/i18n/zh.json {k}", v) for k, v in zh.items()]
    for f in sorted((ROOT / "frontend/js").rglob("*.js")):
        src = f.read_text(encoding="utf-8")
        for start, text, english in js_strings(src):
            if CJK.search(text) and not english:
                items.append((f"{f.relative_to(ROOT)}:{src.count(chr(10), 0, start) + 1}", text))
    items += _catalog_strings()
    for f in sorted((ROOT / "backend").rglob("*.py")):
        src = f.read_text(encoding="utf-8")
        for line, literal in py_strings(src):
            if CJK.search(literal):
                items.append((f"{f.relative_to(ROOT)}:{line}", literal))
    for f in sorted((ROOT / "lessons").glob("*.zh.md")):
        fence = False
        for ln, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("```"):
                fence = not fence
            elif fence:  # a directive (lesson, do, poll): its JSON strings are read (a poll's)
                for text in re.findall(r'"((?:[^"\\]|\\.)*)"', line):
                    items.append((f"{f.relative_to(ROOT)}:{ln}", text))
            else:  # code spans hold code, not Chinese prose
                items.append((f"{f.relative_to(ROOT)}:{ln}", re.sub(r"`[^`]*`", "``", line)))
    return tuple(items)


def glossary() -> list[dict]:
    return json.loads(GLOSSARY.read_text(encoding="utf-8"))["terms"]


def forbidden_in(text: str, where: str) -> list[str]:
    """The glossary's forbidden wordings found in `text`, as "term: wording"."""
    found = []
    for term in glossary():
        if where.startswith(EXEMPT.get(term["en"], ())):
            continue
        found += [f"{term['en']}: {w}" for w in term["forbid"] if w in text]
        found += [f"{term['en']}: /{p}/" for p in term.get("forbid_re", []) if re.search(p, text)]
    return found


def half_width_parens(text: str) -> list[str]:
    """Half-width (...) around Chinese: its content holds Chinese, or Chinese stands right
    before it (学习率 (AdamW)). A formula's parens stay: one attached to a name (p(标签),
    min(1, c)), a point ((1, 2)), or one followed by an operator or a power ((1 − 学习率·λ)², (R_m q) · (R_n k))."""
    bad, stack = [], []
    for i, c in enumerate(text):
        if c == "(":
            stack.append(i)
        elif c == ")" and stack:
            i0 = stack.pop()
            left = text[i0 - 1 : i0]
            attached = bool(left) and ((left.isalnum() and not CJK.match(left)) or left in "_])'′|")
            after = text[i + 1 :].lstrip()[:1]
            point = re.fullmatch(r"[\d\s,.−-]+", text[i0 + 1 : i])  # coordinates: (1, 2)
            formula = attached or point or (after != "" and after in "²³ᵀ^=/·×*+−")
            before = text[:i0].rstrip()[-1:]
            if not formula and (CJK.search(text[i0 + 1 : i]) or CJK.match(before or "a")):
                bad.append(text[max(0, i0 - 6) : i + 2])
    return bad


def test_the_collector_reads_every_source():
    where = [w for w, _ in zh_strings()]
    for source, at_least in [
        ("frontend/i18n/zh.json", 100),
        ("frontend/js/labs/", 1000),
        ("frontend/js/components/", 20),
        ("catalog ", 400),
        ("backend/labs/", 400),
        ("lessons/", 50),
    ]:
        assert sum(w.startswith(source) for w in where) >= at_least, source
    texts = {t for _, t in zh_strings()}
    # one string of each kind, by its content: a view table, a try-next text, a param label
    assert any("KV 缓存" in t for w, t in zh_strings() if "kv-cache.js" in w)
    assert any(w.startswith("catalog ") and ".experiments[" in w for w in where)
    assert any(w.endswith(".label") and "学习率" in t for w, t in zh_strings())
    assert texts


def test_js_tokenizer_skips_comments_and_regexes():
    src = "// 词元 in a comment\nconst r = /['\"]/g; /* 瞎猜 */ x = a / b / c;\n" + (
        "const s = { zh: '学习率 (x)', t: `a ${f('b')} 词元` };"
    )
    texts = [t for _, t, _ in js_strings(src)]
    assert texts == ["学习率 (x)", "a ", "b", " 词元"]
    table = "const en = { 'a.b': 'tech (小米)', c: `${x} 小米` };\nconst zh = { 'a.b': '科技' };"
    assert [(t, en) for _, t, en in js_strings(table)] == [
        ("tech (小米)", True),
        ("", True),
        (" 小米", True),
        ("科技", False),
    ]
    inline = "pick({ zh: '学习率', en: 'rate (学习率)' })"
    assert [(t, en) for _, t, en in js_strings(inline)] == [
        ("学习率", False),
        ("rate (学习率)", True),
    ]


def test_python_strings_skip_english_and_docstrings():
    src = '"""模块 (docstring)."""\nx = param(1, zh="学习率", en="rate (学习率)")\n'
    src += 'd = {"zh": "说明", "en": ("An order (苹果 1) " "and more")}\n'
    assert [lit for _, lit in py_strings(src) if CJK.search(lit)] == ['"学习率"', '"说明"']


def test_glossary_entries_are_whole():
    terms = glossary()
    assert len({t["en"] for t in terms}) == len(terms)
    for t in terms:
        assert t["en"] and t["zh"] and isinstance(t["forbid"], list), t
        own = [w for w in t["forbid"] if w in t["zh"]]
        own += [p for p in t.get("forbid_re", []) if re.search(p, t["zh"])]
        assert not own, t  # a term never forbids itself
    by_en = {t["en"]: t for t in terms}
    assert by_en["token"]["zh"] == "token"
    assert by_en["attention sink"]["zh"] == "注意力汇点"
    assert by_en["hidden size"]["zh"] == "隐藏状态维度"
    assert by_en["chance level"]["zh"] == "随机猜测的水平"
    assert by_en["run (noun: one training)"]["zh"] == "本次训练"


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("第一个词 <s>", True),
        ("每个 token 都", False),
        ("下一个词元的候选", True),
        ("就是汇聚词", True),
        ("注意力汇：[CLS]", True),
        ("注意力汇点：[CLS]", False),
        ("瞎猜是 1/{n}", True),
        ("点线：随机猜（0.1）", True),
        ("随机猜测的水平", False),
        ("隐状态宽度", True),
        ("各组的训练损失", True),
        ("GQA 让一组查询头共用一对 K/V", False),
        ("保留这次运行", True),
        ("运行一步（右方向键）", False),
        ("词表大小", False),
    ],
)
def test_forbidden_wordings_are_recognised(text, flagged):
    assert bool(forbidden_in(text, "x")) == flagged


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("学习率 (AdamW)", True),
        ("两个点 (1,2),(2,3)", False),
        ("两个点 (1,x)", True),
        ("p(标签)", False),
        ("损失 L(x) = (x·苹果数 − 总价)²", False),
        ("RoPE 分数 (R_m q) · (R_n k)", False),
        ("延迟 N (干扰步数)", True),
        ("学习率（AdamW）", False),
        ("裁剪系数 min(1, max_norm / ‖g‖)", False),
        ("f(x) 的值", False),
        ("softmax(x)", False),
    ],
)
def test_half_width_parens_are_recognised(text, flagged):
    assert bool(half_width_parens(text)) == flagged


def test_no_zh_string_uses_a_forbidden_wording():
    bad = [f"{w}: {hits} in {t!r}" for w, t in zh_strings() if (hits := forbidden_in(t, w))]
    assert not bad, f"{len(bad)} zh strings off the glossary:\n" + "\n".join(bad)


def test_chinese_text_has_full_width_parens():
    bad = [f"{w}: {p}" for w, t in zh_strings() for p in half_width_parens(t)]
    assert not bad, f"{len(bad)} half-width parens around Chinese:\n" + "\n".join(bad)


def test_the_glossary_is_served_with_the_frontend(client):
    """Later views read it (tap-to-define): it is a static file beside the i18n tables."""
    served = client.get("/i18n/glossary.json")
    assert served.status_code == 200 and served.json()["terms"] == glossary()
