"""The error body every HTTP route answers with, declared in the OpenAPI document.

FastAPI's `HTTPException` answers `{"detail": "..."}` but documents only 200 and 422; a route
that raises another status lists it with `responses=problem(...)` so the schema tells the truth
(tests/backend/test_schemathesis.py checks every status against it).
"""

from __future__ import annotations

from pydantic import BaseModel


class Problem(BaseModel):
    detail: str


def problem(*codes: int) -> dict:
    """`responses=` for these statuses, each with a `Problem` body."""
    return {code: {"model": Problem} for code in codes}
