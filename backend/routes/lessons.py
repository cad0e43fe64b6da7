"""Lessons over HTTP: the list (built-in and the teacher's) and one lesson in a language."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from pydantic import BaseModel

from backend import lessons
from backend.routes.problems import problem

router = APIRouter(prefix="/api", tags=["lessons"])


class LessonRow(BaseModel):
    id: str
    source: Literal["builtin", "teacher"]
    title: dict[str, str]
    labs: list[str]
    steps: int | None = None
    error: str | None = None  # a broken lesson: its file, line and why


class Step(BaseModel):
    title: str
    html: str  # rendered without raw HTML
    do: list[dict[str, Any]]  # directives (docs/lessons.md)
    line: int


class Lesson(BaseModel):
    id: str
    lang: Literal["en", "zh"]
    source: Literal["builtin", "teacher"]
    title: dict[str, str]
    lab: str
    steps: list[Step]


def _teacher_dir(request: Request):
    return request.app.state.settings.lessons_dir


@router.get("/lessons")
def list_lessons(request: Request) -> list[LessonRow]:
    """Read from disk on every call: a lesson dropped into the folder is listed at once."""
    return [LessonRow.model_validate(r) for r in lessons.listing(_teacher_dir(request))]


@router.get("/lessons/{lesson_id}", responses=problem(404, 422))
def get_lesson(
    lesson_id: str,
    request: Request,
    # Checked here, not by FastAPI, so a bad lang gets the same documented Problem body
    # as a broken lesson does.
    lang: str = Query("en", json_schema_extra={"enum": list(lessons.LANGS)}),
) -> Lesson:
    if lang not in lessons.LANGS:
        raise HTTPException(422, f"lang: {lang!r} is not one of {', '.join(lessons.LANGS)}")
    folder = lessons.find(lesson_id, _teacher_dir(request))
    if folder is None:
        raise HTTPException(404, f"no lesson {lesson_id!r}")
    try:
        both = lessons.load(lesson_id, folder)
    except (lessons.LessonError, OSError) as e:
        raise HTTPException(422, str(e)) from None
    source = "builtin" if folder == lessons.BUILTIN_DIR else "teacher"
    one = both[lang]
    title = {code: both[code]["title"] for code in lessons.LANGS}
    return Lesson(
        id=lesson_id, lang=lang, source=source, title=title, lab=one["lab"], steps=one["steps"]
    )
