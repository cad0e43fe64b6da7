"""The lab registry. Importing this package imports every lab module, which registers itself."""

from __future__ import annotations

import importlib
import logging
import pkgutil

from backend import view_keys
from backend.labs.base import Lab

log = logging.getLogger("shaomai.labs")
REGISTRY: dict[str, type[Lab]] = {}
FAILED: dict[str, str] = {}  # module -> error: a broken lab is skipped, never fatal


def register(cls: type[Lab]) -> type[Lab]:
    if cls.id in REGISTRY:
        raise ValueError(f"lab id {cls.id!r} registered twice")
    REGISTRY[cls.id] = cls
    return cls


def load_all() -> dict[str, type[Lab]]:
    for mod in pkgutil.iter_modules(__path__):
        if mod.name in {"base"} or mod.name.startswith("_"):
            continue
        try:
            importlib.import_module(f"{__name__}.{mod.name}")
        except Exception as exc:
            FAILED[mod.name] = f"{type(exc).__name__}: {exc}"
            log.exception("lab module %s failed to import; skipped", mod.name)
    return REGISTRY


def catalog_entry(cls: type[Lab]) -> dict:
    return {
        "id": cls.id,
        "chapter": cls.chapter,
        "order": cls.order,
        "title": cls.title,
        "description": cls.description,
        "trains": cls.trains,
        "plays": cls.plays,
        "play_speed": cls.play_speed,
        "phone_slice": cls.phone_slice,
        "tensors": list(cls.tensors),
        "schema": cls.Params.model_json_schema(),
        # What a class follows of the driver's view: the generic keys and the lab's own.
        "view_keys": view_keys.keys_of(cls),
    }
