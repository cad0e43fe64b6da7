"""Lessons: a Markdown file per language (docs/lessons.md), parsed into steps a page applies.

A lesson is `<id>.en.md` and `<id>.zh.md` in lessons/ (built in) or SHAOMAI_LESSONS_DIR (a
teacher's). `# Title`, a ```lesson block naming its lab, then one `## ` heading per step; a
step's ```do block holds its directives, one a line: a name and a JSON object (or nothing).
Markdown is rendered by markdown-it-py's CommonMark preset with raw HTML off, so a lesson
cannot inject a script. Files are read on every request: a dropped-in lesson appears at once.
A broken lesson is listed with an error naming its file and line; it never breaks the list.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from markdown_it import MarkdownIt
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from backend.labs import REGISTRY, load_all
from backend.labs.gpt import SOLVED
from backend.view_keys import GENERIC

BUILTIN_DIR = Path(__file__).resolve().parent.parent / "lessons"
LANGS = ("en", "zh")
ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
MAX_BYTES = 200_000
MAX_STEPS = 60
# "until": a name for a condition a lab already reports as a scalar (gpt: held-out accuracy).
NAMED_UNTIL = {"solved": {"scalar": "seq_acc", "above": SOLVED}}
# A highlight names a control, a param's field, or a region of the view by its data attribute.
CONTROLS = ("play", "step", "step10", "reset", "speed", "scrub", "share_class")
VIEW_SELECTOR = re.compile(r'^(\[data-[a-z][a-z0-9-]*(="[A-Za-z0-9_.:-]+")?\] ?){1,3}$')

_md = MarkdownIt("commonmark", {"html": False})


class LessonError(ValueError):
    """A lesson that cannot be used: the file and line it went wrong at, and why."""

    def __init__(self, path: Path, line: int, why: str):
        super().__init__(f"{path.name}:{line}: {why}")


class _D(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class Open(_D):
    lab: str | None = None  # the lesson's lab unless named
    params: dict[str, Any] = {}
    seed: int = Field(default=0, ge=0, le=2**31 - 1)


class Until(_D):
    scalar: str = Field(max_length=32)
    above: float | None = None
    below: float | None = None

    @model_validator(mode="after")
    def _one(self) -> Until:
        if (self.above is None) == (self.below is None):
            raise ValueError("give exactly one of `above` and `below`")
        return self


class Play(_D):
    to: int | None = Field(default=None, ge=1, le=100_000)  # train to this step, then pause
    until: Until | Literal["solved"] | None = None
    max: int = Field(default=5000, ge=1, le=100_000)  # with `until`: give up at this step

    @model_validator(mode="after")
    def _target(self) -> Play:
        if self.to is None and self.until is None:
            raise ValueError("give `to` (a step) or `until` (a condition)")
        return self


class Pause(_D):
    pass


class Highlight(_D):
    control: Literal[CONTROLS] | None = None  # type: ignore[valid-type]
    param: str | None = Field(default=None, max_length=64)
    view: str | None = Field(default=None, max_length=120, pattern=VIEW_SELECTOR.pattern)

    @model_validator(mode="after")
    def _one(self) -> Highlight:
        if sum(x is not None for x in (self.control, self.param, self.view)) != 1:
            raise ValueError("give exactly one of `control`, `param` and `view`")
        return self


class Note(_D):
    text: str = Field(min_length=1, max_length=500)
    # "class": shown only once a class is joined (a learner alone has no phone to vote on).
    when: Literal["class"] | None = None


class Numeric(_D):
    metric: str = Field(max_length=32)
    step: int = Field(ge=1, le=100_000)


class Poll(_D):
    question: str = Field(min_length=1, max_length=200)
    choices: list[str] | None = Field(default=None, min_length=2, max_length=6)
    numeric: Numeric | None = None
    answer: int | None = Field(default=None, ge=0, le=5)  # the right choice, shown once closed

    @model_validator(mode="after")
    def _one(self) -> Poll:
        if (self.choices is None) == (self.numeric is None):
            raise ValueError("give exactly one of `choices` and `numeric`")
        if self.answer is not None and (self.choices is None or self.answer >= len(self.choices)):
            raise ValueError("`answer` is the index of one of the choices")
        return self


DIRECTIVES: dict[str, type[_D]] = {
    "open": Open,
    "play": Play,
    "pause": Pause,
    "highlight": Highlight,
    "note": Note,
    "poll": Poll,
}  # and `select`: the lab's view keys (checked against the lab below)


class Header(_D):
    lab: str


def _directive(path: Path, line: int, text: str, lab: str) -> dict[str, Any]:
    name, _, rest = text.strip().partition(" ")
    try:
        args = json.loads(rest) if rest.strip() else {}
    except json.JSONDecodeError as e:
        raise LessonError(path, line, f"`{name}`: not JSON ({e.msg})") from None
    if not isinstance(args, dict):
        raise LessonError(path, line, f"`{name}`: its argument must be a JSON object")
    if name == "select":
        return {"kind": "select", "keys": _select(path, line, args, lab)}
    model = DIRECTIVES.get(name)
    if model is None:
        known = ", ".join([*DIRECTIVES, "select"])
        raise LessonError(path, line, f"no directive {name!r} (there are {known})")
    try:
        d = model.model_validate(args)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise LessonError(
            path, line, f"`{name}` {where}: {err['msg']}".replace(" : ", ": ")
        ) from None
    out = {"kind": name, **d.model_dump(exclude_none=True)}
    if name == "open":
        out["lab"] = d.lab or lab
        _check_params(path, line, out["lab"], d.params)
    if name == "play" and d.until == "solved":
        out["until"] = NAMED_UNTIL["solved"]
    if name == "highlight" and d.param:
        _check_field(path, line, lab, d.param)
    return out


def _lab(path: Path, line: int, lab: str):
    cls = REGISTRY.get(lab) or load_all().get(lab)  # the app has loaded them; a script may not
    if cls is None:
        raise LessonError(path, line, f"no lab {lab!r}")
    return cls


def _check_params(path: Path, line: int, lab: str, params: dict[str, Any]) -> None:
    cls = _lab(path, line, lab)
    unknown = set(params) - set(cls.Params.model_fields)
    if unknown:
        raise LessonError(path, line, f"{lab} has no param {sorted(unknown)[0]!r}")
    try:
        cls.Params.model_validate(params)
    except ValidationError as e:
        err = e.errors()[0]
        raise LessonError(path, line, f"{lab} param {err['loc'][0]}: {err['msg']}") from None


def _check_field(path: Path, line: int, lab: str, name: str) -> None:
    if name not in _lab(path, line, lab).Params.model_fields:
        raise LessonError(path, line, f"{lab} has no param {name!r} to highlight")


def _select(path: Path, line: int, keys: dict[str, Any], lab: str) -> dict[str, Any]:
    own = _lab(path, line, lab).view_keys
    for k, v in keys.items():
        if k not in own or k in GENERIC:
            raise LessonError(path, line, f"{lab} has no view key {k!r} (it has {', '.join(own)})")
        spec = own[k]
        if (
            not isinstance(v, int)
            or isinstance(v, bool)
            or not spec.get("min", -1e9) <= v <= spec.get("max", 1e9)
        ):
            raise LessonError(path, line, f"view key {k!r}: {v!r} is out of its range")
    return keys


def parse_file(path: Path) -> dict[str, Any]:
    """One language's file -> {title, lab, steps: [{title, html, do}]}, or LessonError."""
    raw = path.read_bytes()
    if len(raw) > MAX_BYTES:
        raise LessonError(path, 1, f"larger than {MAX_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise LessonError(path, 1, "not UTF-8 text") from None
    tokens = _md.parse(text)
    title, lab, steps = None, None, []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        line = (tok.map[0] + 1) if tok.map else 1
        if tok.type == "heading_open" and tok.tag in ("h1", "h2"):
            heading = tokens[i + 1].content.strip()
            if tok.tag == "h1":
                if title is not None or steps:
                    raise LessonError(path, line, "one `# title`, before the first step")
                title = heading
            else:
                if lab is None:
                    raise LessonError(path, line, "a ```lesson block naming its lab comes first")
                steps.append({"title": heading, "body": [], "do": [], "line": line})
            i += 3
            continue
        if tok.type == "fence" and tok.info.strip() == "lesson":
            try:
                lab = Header.model_validate(json.loads(tok.content)).lab
            except (json.JSONDecodeError, ValidationError) as e:
                raise LessonError(path, line, f'```lesson: needs {{"lab": ...}} ({e})') from None
            _lab(path, line, lab)
        elif tok.type == "fence" and tok.info.strip() == "do":
            if not steps:
                raise LessonError(path, line, "a ```do block belongs to a step (## heading)")
            for k, d in enumerate(tok.content.splitlines()):
                if d.strip():
                    steps[-1]["do"].append(_directive(path, line + 1 + k, d, lab))
        elif steps:
            steps[-1]["body"].append(tok)
        i += 1
    if not title:
        raise LessonError(path, 1, "no `# title`")
    if not steps:
        raise LessonError(path, 1, "no steps (a step starts with a `## ` heading)")
    if len(steps) > MAX_STEPS:
        raise LessonError(path, steps[MAX_STEPS]["line"], f"more than {MAX_STEPS} steps")
    for s in steps:
        s["html"] = _md.renderer.render(s.pop("body"), _md.options, {})
    return {"title": title, "lab": lab, "steps": steps}


def _ids(folder: Path) -> set[str]:
    if not folder.is_dir():
        return set()
    return {p.name.split(".")[0] for p in folder.glob("*.md") if p.name.count(".") == 2}


def _folders(teacher_dir: Path | None) -> list[tuple[str, Path]]:
    out = [("builtin", BUILTIN_DIR)]
    if teacher_dir and str(teacher_dir) and teacher_dir.resolve() != BUILTIN_DIR:
        out.append(("teacher", teacher_dir))
    return out


def load(lesson_id: str, folder: Path) -> dict[str, dict[str, Any]]:
    """Both languages of one lesson, checked to agree step by step, or LessonError."""
    out = {}
    for lang in LANGS:
        path = folder / f"{lesson_id}.{lang}.md"
        if not path.is_file():
            raise LessonError(path, 1, f"missing: a lesson has an {lang} file beside the other")
        out[lang] = parse_file(path)
    en, zh = out["en"], out["zh"]
    path = folder / f"{lesson_id}.zh.md"
    if en["lab"] != zh["lab"]:
        raise LessonError(path, 1, f"lab {zh['lab']!r} is not the en file's {en['lab']!r}")
    if len(en["steps"]) != len(zh["steps"]):
        raise LessonError(path, 1, f"{len(zh['steps'])} steps, the en file has {len(en['steps'])}")
    for a, b in zip(en["steps"], zh["steps"], strict=True):
        if [d["kind"] for d in a["do"]] != [d["kind"] for d in b["do"]]:
            raise LessonError(path, b["line"], "this step's directives differ from the en file's")
    return out


def listing(teacher_dir: Path | None) -> list[dict[str, Any]]:
    """Every lesson, built-in first: id, titles, labs, source and, if broken, why."""
    rows = []
    seen = set()
    for source, folder in _folders(teacher_dir):
        for lesson_id in sorted(_ids(folder)):
            if lesson_id in seen or not ID.match(lesson_id):
                continue  # a teacher's lesson cannot shadow a built-in one
            seen.add(lesson_id)
            row: dict[str, Any] = {"id": lesson_id, "source": source, "title": {}, "labs": []}
            try:
                both = load(lesson_id, folder)
            except (LessonError, OSError) as e:
                row["error"] = str(e)
                row["title"] = {"en": lesson_id, "zh": lesson_id}
            else:
                row["title"] = {lang: both[lang]["title"] for lang in LANGS}
                labs = [both["en"]["lab"]]
                labs += [
                    d["lab"] for s in both["en"]["steps"] for d in s["do"] if d["kind"] == "open"
                ]
                row["labs"] = list(dict.fromkeys(labs))
                row["steps"] = len(both["en"]["steps"])
            rows.append(row)
    return rows


def find(lesson_id: str, teacher_dir: Path | None) -> Path | None:
    if not ID.match(lesson_id):
        return None
    for _, folder in _folders(teacher_dir):
        if lesson_id in _ids(folder):
            return folder
    return None
