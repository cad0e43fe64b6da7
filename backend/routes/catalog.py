from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, ConfigDict, Field

from backend.labs import REGISTRY, catalog_entry
from backend.labs.experiments import experiments_for
from backend.routes.problems import problem

router = APIRouter(prefix="/api", tags=["catalog"])


class LabInfo(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    id: str
    chapter: int
    order: int
    title: dict[str, str]
    description: dict[str, str]
    trains: bool
    # Play/step do something the learner sees: always, never, or when the params match.
    plays: bool | dict[str, Any] = True
    play_speed: int = 100  # the page's default steps a second (the server still caps it)
    phone_slice: bool = False  # its page on a phone subscribes to one slice (wait=subscribe)
    tensors: list[str]
    params_schema: dict[str, Any] = Field(alias="schema")
    view_keys: dict[str, dict[str, Any]] = {}  # backend/view_keys.py: generic + the lab's
    experiments: list[dict[str, Any]] = []  # "try this next" (backend/labs/experiments/)


@router.get("/labs")
def list_labs() -> list[LabInfo]:
    """Every lab with its chapter, zh/en title and description, and its params' JSON Schema."""
    labs = sorted(REGISTRY.values(), key=lambda c: (c.chapter, c.order, c.id))
    return [_info(c) for c in labs]


@router.get("/labs/{lab_id}", responses=problem(404))
def get_lab(lab_id: str) -> LabInfo:
    cls = REGISTRY.get(lab_id)
    if cls is None:
        raise HTTPException(404, f"no lab {lab_id!r}")
    return _info(cls)


def _info(cls: type) -> LabInfo:
    return LabInfo.model_validate({**catalog_entry(cls), "experiments": experiments_for(cls.id)})
