"""Promises 2 and 4: params are bounded before torch sees them; floods are throttled.

Every lab in the registry is probed field by field with values no bound should let
through (1e300, NaN, a megabyte string, a 100,000-item list, and the same inside lists),
so a field added without a bound fails here. A model over SHAOMAI_MAX_SESSION_MB is refused
with `too_large` and the field to lower. Per-address session and join-attempt limits and the
per-connection message rate answer `busy`, and one client's flood leaves another's alone.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from backend.admission import SessionError
from backend.app import create_app
from backend.config import Settings
from backend.labs import REGISTRY, load_all
from backend.manager import SessionManager
from tests.wsutil import open_lab, recv_until, send, step  # every wait has a deadline

load_all()
LABS = sorted(REGISTRY)
HUGE_LIST = 100_000
HUGE_STRING = 1_000_000


def expect_error(ws, code: str | None = None) -> dict:
    err, _ = recv_until(ws, lambda m: m["type"] == "error")
    assert code is None or err["code"] == code, err
    return err


# -- every field is bounded -------------------------------------------------------------------
def _resolve(node: dict, defs: dict) -> dict:
    if "$ref" in node:
        return _resolve(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in node:  # Optional[X]: probe X
        branches = [b for b in node["anyOf"] if b.get("type") != "null"]
        return _resolve(branches[0], defs) if branches else node
    return node


def _sample(node: dict, defs: dict) -> Any:
    """A small value of this schema, to build lists around."""
    node = _resolve(node, defs)
    if "enum" in node:
        return node["enum"][0]
    kind = node.get("type")
    if kind in ("number", "integer"):
        lo, hi = node.get("minimum", -math.inf), node.get("maximum", math.inf)
        return 0 if lo <= 0 <= hi else (lo if math.isfinite(lo) else hi)
    if kind == "string":
        return "a" * max(1, node.get("minLength", 1))
    if kind == "boolean":
        return True
    if kind == "array":
        if "prefixItems" in node:
            return [_sample(p, defs) for p in node["prefixItems"]]
        return [_sample(node.get("items", {}), defs)] * max(1, node.get("minItems", 1))
    return None


def _unbounded(node: dict, defs: dict, default: Any) -> list[tuple[str, Any]]:
    """(what, value) pairs no bounded field of this schema may accept."""
    node = _resolve(node, defs)
    kind = node.get("type")
    if "enum" in node or "const" in node or kind == "boolean":
        return []
    if kind == "integer":
        return [("1e30", 10**30), ("-1e30", -(10**30))]
    if kind == "number":
        return [("1e300", 1e300), ("-1e300", -1e300), ("NaN", math.nan), ("inf", math.inf)]
    if kind == "string":
        return [("1 MB string", "x" * HUGE_STRING)]
    if kind != "array":
        return []
    value = default if isinstance(default, list) and default else _sample(node, defs)
    out = [(f"{HUGE_LIST:,} items", [value[0]] * HUGE_LIST)]
    if "prefixItems" in node:  # a tuple: probe each position
        for i, sub in enumerate(node["prefixItems"]):
            for what, v in _unbounded(sub, defs, value[i]):
                out.append((f"[{i}] = {what}", [*value[:i], v, *value[i + 1 :]]))
    elif "items" in node:
        for what, v in _unbounded(node["items"], defs, value[0]):
            out.append((f"[0]{'' if what.startswith('[') else ' = '}{what}", [v, *value[1:]]))
    return out


def probes() -> list[tuple[str, str, str, Any]]:
    out = []
    for lab_id in LABS:
        schema = REGISTRY[lab_id].Params.model_json_schema()
        defs = schema.get("$defs", {})
        for name, prop in schema["properties"].items():
            for what, value in _unbounded(prop, defs, prop.get("default")):
                out.append((lab_id, name, what, value))
    return out


PROBES = probes()


def test_the_probes_cover_every_lab_and_kind():
    assert {p[0] for p in PROBES} == set(LABS)
    whats = {p[2] for p in PROBES}
    assert {"1e300", "NaN", "1e30", "1 MB string", f"{HUGE_LIST:,} items"} <= whats
    assert any(w.startswith("[0]") for w in whats)  # inside lists too


@pytest.mark.parametrize("lab_id", LABS)
def test_every_param_of_every_lab_is_bounded(lab_id):
    Params = REGISTRY[lab_id].Params
    Params()  # the defaults are valid
    let_through = []
    for lab, name, what, value in PROBES:
        if lab != lab_id:
            continue
        try:
            Params.model_validate({name: value})
        except ValidationError:
            continue
        let_through.append(f"{name} = {what}")
    assert let_through == [], f"{lab_id} accepts unbounded values: {let_through}"


def test_unknown_params_are_refused_by_every_lab():
    for lab_id in LABS:
        with pytest.raises(ValidationError):
            REGISTRY[lab_id].Params.model_validate({"__class__": "x"})


def test_a_bound_removed_is_caught():
    """Break the promise once: a field without a bound is reported."""
    from pydantic import Field

    from backend.labs.base import LabParams

    class Loose(LabParams):
        n: int = Field(1, ge=0)
        xs: list[float] = Field(default_factory=lambda: [1.0], max_length=10)
        name: str = ""

    schema = Loose.model_json_schema()
    found = set()
    for name, prop in schema["properties"].items():
        for what, value in _unbounded(prop, {}, prop.get("default")):
            try:
                Loose.model_validate({name: value})
                found.add((name, what))
            except ValidationError:
                pass
    assert ("n", "1e30") in found and ("xs", "[0] = 1e300") in found
    assert ("name", "1 MB string") in found


# -- the memory cap ---------------------------------------------------------------------------
def _maxed(lab_id: str) -> dict:
    """Every numeric field at its maximum, as far as the lab's validators allow."""
    Params = REGISTRY[lab_id].Params
    props = Params.model_json_schema()["properties"]
    raw: dict = {}
    for name, prop in props.items():
        top = prop.get("maximum")
        if top is None or prop.get("type") not in ("integer", "number"):
            continue
        try:
            Params.model_validate({**raw, name: top})
            raw[name] = top
        except ValidationError:
            pass
    return raw


def _sized_labs() -> list[str]:
    """Labs whose estimated size depends on their params."""
    out = []
    for lab_id in LABS:
        cls = REGISTRY[lab_id]
        small = cls.estimate_mb(cls.Params())[0]
        big = cls.estimate_mb(cls.Params.model_validate(_maxed(lab_id)))[0]
        if big > small * 1.01:
            out.append(lab_id)
    return out


SIZED = _sized_labs()


def test_some_labs_have_a_size_that_depends_on_params():
    assert "gpt" in SIZED and "digits" in SIZED


@pytest.mark.parametrize("lab_id", SIZED)
def test_a_model_over_the_cap_is_too_large_and_names_the_field_to_lower(tmp_path, lab_id):
    cls = REGISTRY[lab_id]
    raw = _maxed(lab_id)
    small = cls.estimate_mb(cls.Params())[0]
    big = cls.estimate_mb(cls.Params.model_validate(raw))[0]
    cap = (small + big) / 2
    with TestClient(create_app(Settings(data_dir=tmp_path, max_session_mb=cap))) as c:
        with c.websocket_connect("/ws") as ws:
            send(ws, {"type": "open", "lab": lab_id, "params": raw})
            err = expect_error(ws, "too_large")
    field = err["field"]
    assert field in cls.Params.model_fields, err
    assert f"lower {field}" in err["message"] and "MB" in err["message"]
    # Lowering that field (to its minimum) does make the model smaller.
    low = cls.Params.model_json_schema()["properties"][field].get("minimum")
    assert low is not None
    lowered = cls.Params.model_validate({**raw, field: low})
    assert cls.estimate_mb(lowered)[0] < big


def test_too_large_comes_before_anything_is_built(tmp_path, monkeypatch):
    built = []
    cls = REGISTRY["gpt"]
    monkeypatch.setattr(cls, "__init__", lambda *a, **k: built.append(1))
    with TestClient(create_app(Settings(data_dir=tmp_path, max_session_mb=1))) as c:
        with c.websocket_connect("/ws") as ws:
            send(ws, {"type": "open", "lab": "gpt"})
            expect_error(ws, "too_large")
            open_lab(ws, "linear-regression")  # the connection goes on
            send(ws, {"type": "set", "params": {"lr": 0.05}})
            recv_until(ws, lambda m: m["type"] == "params")
    assert built == []


@pytest.mark.parametrize(
    ("pasted", "size", "code"),
    [
        ("The shaomai is steamed. " * 8750, "210,000 bytes", "invalid_params"),  # over 200 kB
        ("小烧麦" * 25_000, "225,000 bytes", "invalid_params"),  # 75,000 characters, 3 bytes each
        ("x" * 300_000, r"300,?0\d\d bytes", "too_large"),  # over the message cap itself
    ],
    ids=["ascii", "utf-8", "message"],
)
def test_pasted_text_over_the_cap_is_refused_with_its_size(client, pasted, size, code):
    """Default settings: the answer gives the size in bytes, counted in UTF-8."""
    with client.websocket_connect("/ws") as ws:
        params = {"data": "text-pasted", "pasted": pasted}
        msg = {"type": "open", "lab": "gpt", "params": params}
        ws.send_text(json.dumps(msg, ensure_ascii=False))  # as a browser sends it: UTF-8
        err = expect_error(ws, code)
        assert re.search(size, err["message"]), err
        open_lab(ws, "linear-regression")


# -- floods -----------------------------------------------------------------------------------
def test_sessions_per_address_are_capped(tmp_path):
    settings = Settings(data_dir=tmp_path, max_sessions_per_ip=2)
    with TestClient(create_app(settings)) as c:
        with c.websocket_connect("/ws") as a, c.websocket_connect("/ws") as b:
            open_lab(a, "linear-regression")
            open_lab(b, "linear-regression")
            with c.websocket_connect("/ws") as third:
                send(third, {"type": "open", "lab": "linear-regression"})
                assert "address" in expect_error(third, "busy")["message"]
                send(third, {"type": "join", "session": "x" * 16})  # still answered
                expect_error(third, "not_found")


def test_new_sessions_per_address_per_minute_are_capped(tmp_path):
    settings = Settings(data_dir=tmp_path, sessions_per_ip_per_min=3, idle_grace_s=0)
    with TestClient(create_app(settings)) as c:
        for _ in range(3):
            with c.websocket_connect("/ws") as ws:
                open_lab(ws, "linear-regression")
        with c.websocket_connect("/ws") as ws:
            send(ws, {"type": "open", "lab": "linear-regression"})
            assert "minute" in expect_error(ws, "busy")["message"]


def test_limits_count_per_address():
    """One address at its cap does not stop another (a second classroom, a second NAT)."""

    async def scenario():
        sessions = SessionManager(Settings(max_sessions_per_ip=1, sessions_per_ip_per_min=2))
        try:
            await sessions.create("linear-regression", {}, 0, "10.0.0.1")
            with pytest.raises(SessionError) as exc:
                await sessions.create("linear-regression", {}, 0, "10.0.0.1")
            assert exc.value.code == "busy"
            await sessions.create("linear-regression", {}, 0, "10.0.0.2")
            assert len(sessions.sessions) == 2
        finally:
            await sessions.stop()

    asyncio.run(scenario())


def test_join_attempts_are_limited_over_http_and_websocket_together(tmp_path):
    settings = Settings(data_dir=tmp_path, join_attempts_per_min=5)
    with TestClient(create_app(settings)) as c:
        c.app.state.sessions.shared.clock = lambda: 1000.0  # no turn comes back in the test
        c.app.state.sessions.join_turns.wait_s = 0  # and none is waited for
        with c.websocket_connect("/ws") as teacher:
            open_lab(teacher, "linear-regression")
            send(teacher, {"type": "share"})
            code = recv_until(teacher, lambda m: m["type"] == "shared")[0]["code"]
            wrong = [f"ZZZZZ{x}" for x in "ABCDE"]  # distinct: a code asked again is free
            statuses = []
            for w in wrong:  # a script keeping no cookie: counted per address, not per browser
                c.cookies.clear()
                statuses.append(c.get(f"/join/{w}", follow_redirects=False).status_code)
            assert statuses == [404] * 5
            # No turn left: a new code waits like any other (here: none is waited for), over
            # HTTP, the QR route and the websocket alike.
            assert c.get("/join/ZZZZZF", follow_redirects=False).status_code == 429
            assert c.get("/api/join/ZZZZZG/qr.svg").status_code == 429
            with c.websocket_connect("/ws") as guesser:
                send(guesser, {"type": "join", "code": "ZZZZZH"})
                assert "join attempts" in expect_error(guesser, "busy")["message"]
            # The teacher shared from this address, so it was told its class's code: the room
            # still gets in (docs/security.md, promise 4), whatever the guessing spent.
            assert c.get(f"/join/{code}", follow_redirects=False).status_code == 303


def test_a_flood_is_throttled_and_leaves_other_connections_alone(tmp_path):
    with TestClient(create_app(Settings(data_dir=tmp_path, messages_per_s=5))) as c:
        with c.websocket_connect("/ws") as flood, c.websocket_connect("/ws") as calm:
            ready = open_lab(flood, "linear-regression")
            open_lab(calm, "linear-regression")
            for _ in range(40):
                send(flood, {"type": "subscribe", "tensors": "*"})
            assert "slow down" in expect_error(flood, "busy")["message"]
            # The other connection has its own allowance: not one `busy`.
            seen = step(calm, 3)
            assert not [m for m in seen if m["type"] == "error"]
            # The flooder is throttled, not dropped: once it slows down it drives again.
            # (One `view` a second until one comes back: whether the server drops the excess
            # or reads it later, the flood is behind us then.)
            for hover in range(1, 20):
                time.sleep(1.0)
                send(flood, {"type": "view", "state": {"hover": hover}})
                try:
                    _, skipped = recv_until(flood, lambda m: m["type"] == "view", seconds=1.5)
                    break
                except AssertionError:
                    continue
            assert {m["code"] for m in skipped if m["type"] == "error"} <= {"busy"}
            time.sleep(0.5)  # a full bucket again
            last = step(flood, 1)[-1]
            assert last["step"] == 1 and ready["session"]


def test_a_backlog_of_commands_is_bounded(tmp_path):
    """Commands queue per connection (in order) up to a bound; beyond it, `busy`."""
    with TestClient(create_app(Settings(data_dir=tmp_path, messages_per_s=1e6))) as c:
        with c.websocket_connect("/ws") as ws:
            open_lab(ws, "linear-regression", {"epochs": 100000})
            for _ in range(200):
                send(ws, {"type": "control", "action": "step", "count": 2000})
            assert "waiting" in expect_error(ws, "busy")["message"]
            send(ws, {"type": "control", "action": "pause"})  # a pause still gets through


def test_a_code_told_missing_is_found_once_its_class_is_back(tmp_path):
    """A class's code missing for a moment (the shared store restarted empty, until the
    replica's heartbeat writes it again): an address told "no class" then is told the class
    as soon as it is back, not a minute later."""
    with TestClient(create_app(Settings(data_dir=tmp_path))) as c:
        sessions = c.app.state.sessions
        shared = sessions.shared
        with c.websocket_connect("/ws") as teacher:
            open_lab(teacher, "linear-regression")
            send(teacher, {"type": "share"})
            code = recv_until(teacher, lambda m: m["type"] == "shared")[0]["code"]
            ref = c.portal.call(shared.lookup, code)
            c.portal.call(shared.drop_code, code, ref.session)
            room = "10.0.0.7"  # a student's address, not the teacher's (told at share)
            with pytest.raises(SessionError) as missing:
                c.portal.call(sessions.resolve_code, code, room)
            assert missing.value.code == "not_found"
            c.portal.call(shared.claim_code, code, ref)
            assert c.portal.call(sessions.resolve_code, code, room).session == ref.session
