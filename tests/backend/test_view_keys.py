"""View-state keys: declared per lab, in the catalog, and checked on every `view` message."""

from __future__ import annotations

import pytest

from backend import view_keys
from backend.labs import REGISTRY, load_all
from tests.wsutil import open_lab, recv_until, send

GPT = {"n_layers": 2, "n_heads": 4}


def test_every_labs_declaration_is_well_formed():
    load_all()
    assert REGISTRY
    for lab_id, cls in REGISTRY.items():
        fields = set(cls.Params.model_fields)
        for name, spec in view_keys.keys_of(cls).items():
            view_keys.check_declaration(f"{lab_id}.{name}", spec, fields)


def test_the_catalog_carries_the_generic_keys_and_the_labs_own(client):
    generic = {"present", "blank", "scrub", "hover", "low", "lesson", "lesson_step"}
    lr = client.get("/api/labs/linear-regression").json()
    assert set(lr["view_keys"]) == generic
    assert lr["view_keys"]["scrub"] == {"type": "int", "min": -1, "max": 2**31 - 1}
    gpt = client.get("/api/labs/gpt").json()["view_keys"]
    assert set(gpt) == generic | {"layer", "head"}
    assert gpt["layer"] == {"type": "int", "min": 0, "max": 5, "below": "n_layers"}
    every = {lab["id"]: lab["view_keys"] for lab in client.get("/api/labs").json()}
    assert every["gpt"] == gpt


def refused(ws, state: dict) -> dict:
    send(ws, {"type": "view", "state": state})
    err, _ = recv_until(ws, lambda m: m["type"] in ("error", "view"))
    assert err["type"] == "error" and err["code"] == "bad_message", (state, err)
    return err


def test_gpt_view_follows_declared_keys_and_refuses_the_rest(client):
    with client.websocket_connect("/ws") as teacher:
        ready = open_lab(teacher, "gpt", GPT)
        state = {"layer": 1, "head": 3, "hover": 2, "present": True, "scrub": -1}
        send(teacher, {"type": "view", "state": {**state, "blank": None}})
        echo, _ = recv_until(teacher, lambda m: m["type"] == "view")
        assert echo["state"] == {**state, "blank": None}  # None clears: sent as null
        with client.websocket_connect(f"/ws?session={ready['session']}") as student:
            view, _ = recv_until(student, lambda m: m["type"] == "view")
            assert view["state"] == state  # a cleared key is not kept for a late joiner
            # The teacher closes the enlarged map: the student is told, and a later joiner
            # no longer gets it.
            send(teacher, {"type": "view", "state": {"layer": None, "head": None}})
            closed, _ = recv_until(student, lambda m: m["type"] == "view")
            assert closed["state"] == {"layer": None, "head": None}
            recv_until(teacher, lambda m: m["type"] == "view")  # the teacher's own echo
        with client.websocket_connect(f"/ws?session={ready['session']}") as late:
            view, _ = recv_until(late, lambda m: m["type"] == "view")
            assert "layer" not in view["state"] and "head" not in view["state"]
        for bad, field, key in [
            ({"layer": 2}, "layer", "err.view_value"),  # this session has 2 layers
            ({"head": 4}, "head", "err.view_value"),  # and 4 heads
            ({"layer": -1}, "layer", "err.view_value"),
            ({"hover": 5000}, "hover", "err.view_value"),
            ({"hover": 1.5}, "hover", "err.view_value"),
            ({"present": 1}, "present", "err.view_value"),
            ({"layer": True}, "layer", "err.view_value"),
            ({"zoom": 2}, "zoom", "err.view_key"),
        ]:
            err = refused(teacher, bad)
            assert err["field"] == f"view.state.{field}" and err["key"] == key, err
            assert err["values"]["key"] == field
        send(teacher, {"type": "set", "params": {"n_layers": 3}})
        recv_until(teacher, lambda m: m["type"] == "params")
        send(teacher, {"type": "view", "state": {"layer": 2}})  # now there is a layer 2
        echo, _ = recv_until(teacher, lambda m: m["type"] == "view")
        assert echo["state"] == {"layer": 2}


@pytest.mark.parametrize("state", [{"layer": 0}, {"head": 1}, {"channel": "x"}])
def test_a_lab_without_those_keys_refuses_them_naming_the_key(client, state):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-regression")
        err = refused(ws, state)
        (name,) = state
        assert err["field"] == f"view.state.{name}" and err["key"] == "err.view_key"
        assert name in err["message"] and "present" in err["message"]
        send(ws, {"type": "view", "state": {"present": False, "hover": -1, "scrub": 3}})
        echo, _ = recv_until(ws, lambda m: m["type"] == "view")
        assert echo["state"] == {"present": False, "hover": -1, "scrub": 3}


def test_the_door_still_refuses_what_no_lab_could_declare(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, "linear-regression")
        for state in ({"k" * 33: 1}, {str(i): 1 for i in range(33)}, {"present": [1]}):
            err = refused(ws, {"hover": 0} | state)
            assert err["field"].startswith("view.state"), err
