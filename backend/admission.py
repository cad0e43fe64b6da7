"""Admission: whether a session may be started with these params, and on which device.

A request is refused with a `SessionError` (a protocol `error`: code, message, field) when
its params fail the lab's schema or its estimated memory is over the cap.
"""

from __future__ import annotations

from typing import Any

import torch
from pydantic import ValidationError

from backend.config import Settings
from backend.labs.base import Lab, LabParams
from backend.protocol import Refusal


class SessionError(Refusal):
    """A request the engine refuses (a bad or oversized params set, a full server, ...)."""


def validate_params(lab_cls: type[Lab], raw: dict[str, Any], settings: Settings) -> LabParams:
    try:
        params = lab_cls.Params.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        text = f"{field}: {err['msg']}" if field else err["msg"]
        # A keyed refusal (labs.base.refuse): the page says it in its own language.
        if "." in err["type"]:
            values = dict(err.get("ctx") or {})
            raise SessionError("invalid_params", text, field, err["type"], values) from None
        raise SessionError("invalid_params", text, field) from None
    mb, field = lab_cls.estimate_mb(params)
    if mb > settings.max_session_mb:
        cap = settings.max_session_mb
        raise SessionError(
            "too_large",
            f"this model needs about {mb:.0f} MB, over the {cap:.0f} MB cap"
            + (f"; lower {field}" if field else ""),
            field,
            key="err.too_large_lower" if field else "err.too_large",
            values={"mb": round(mb), "cap": round(cap), "field": field or ""},
        )
    return params


def pick_device(setting: str) -> torch.device:
    if setting == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(setting)
