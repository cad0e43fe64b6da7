"""The lab registry. Importing this package imports every lab module, which registers itself."""

from __future__ import annotations

import importlib
import pkgutil

from backend.labs.base import Lab

REGISTRY: dict[str, type[Lab]] = {}


def register(cls: type[Lab]) -> type[Lab]:
    if cls.id in REGISTRY:
        raise ValueError(f"lab id {cls.id!r} registered twice")
    REGISTRY[cls.id] = cls
    return cls


def load_all() -> dict[str, type[Lab]]:
    for mod in pkgutil.iter_modules(__path__):
        if mod.name not in {"base"} and not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")
    return REGISTRY


def catalog_entry(cls: type[Lab]) -> dict:
    return {
        "id": cls.id,
        "chapter": cls.chapter,
        "order": cls.order,
        "title": cls.title,
        "description": cls.description,
        "trains": cls.trains,
        "tensors": list(cls.tensors),
        "schema": cls.Params.model_json_schema(),
    }
