"""/api/runs: list, summary, export, import, delete — on a minimal app with just this router."""

from __future__ import annotations

import base64
import json

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from backend.config import Settings
from backend.labs import load_all
from backend.routes import runs
from backend.run_export import export_json, import_json
from backend.saved_run import hash_token
from backend.store import RunStore
from tests.backend.saved_runs import TOKEN, make_run, same_run
from tests.hosted import postgres


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.hosted)])
def store(request, tmp_path):
    """The embedded SQLite file, and the same routes on a real PostgreSQL (tests/hosted)."""
    s = RunStore(tmp_path / "runs.db" if request.param == "sqlite" else postgres.shared().url())
    yield s
    s.close()


@pytest.fixture
def api(store, tmp_path):
    load_all()
    app = FastAPI()
    app.include_router(runs.router)
    app.state.store = store
    app.state.settings = Settings(data_dir=tmp_path)
    with TestClient(app) as c:
        yield c


def test_list_and_summary(api, store):
    assert api.get("/api/runs").json() == []
    run_id = store.save(make_run())
    [summary] = api.get("/api/runs").json()
    assert summary == api.get(f"/api/runs/{run_id}").json() == store.summary(run_id)
    assert api.get("/api/runs", params={"lab": "linear-regression"}).json() == [summary]
    assert api.get("/api/runs", params={"lab": "gpt"}).json() == []
    assert api.get("/api/runs", params={"lab": "Not A Lab"}).status_code == 422
    assert api.get("/api/runs", params={"limit": 0}).status_code == 422
    r = api.get("/api/runs/nope")
    assert r.status_code == 404 and r.json() == {"detail": "no saved run 'nope'"}


def test_export_is_a_download_that_reimports(api, store):
    run_id = store.save(make_run(nan_at=3))
    r = api.get(f"/api/runs/{run_id}/export.json")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    disposition = r.headers["content-disposition"]
    assert disposition == f'attachment; filename="shaomai-linear-regression-{run_id}.json"'
    assert "NaN" in r.text and "NaN," not in r.text  # a string, never a bare NaN literal
    assert same_run(import_json(r.json()), store.get(run_id))
    assert api.get("/api/runs/nope/export.json").status_code == 404

    imported = api.post("/api/runs/import", content=r.content)
    assert imported.status_code == 201
    body = imported.json()
    new_id, token = body.pop("id"), body.pop("token")
    assert new_id != run_id and len(token) >= 32
    assert body == {k: v for k, v in store.summary(run_id).items() if k != "id"}
    assert same_run(store.get(new_id), store.get(run_id))
    # The importer's token deletes the copy; the original's driver token does not.
    assert api.delete(f"/api/runs/{new_id}", headers={"X-Shaomai-Token": TOKEN}).status_code == 403
    assert api.delete(f"/api/runs/{new_id}", headers={"X-Shaomai-Token": token}).status_code == 204


def test_delete_needs_the_driver_token(api, store):
    run_id = store.save(make_run())
    assert api.delete(f"/api/runs/{run_id}").status_code == 403
    r = api.delete(f"/api/runs/{run_id}", headers={"X-Shaomai-Token": "guess"})
    assert r.status_code == 403 and "driver" in r.json()["detail"]
    assert api.delete("/api/runs/nope", headers={"X-Shaomai-Token": TOKEN}).status_code == 404
    r = api.delete(f"/api/runs/{run_id}", headers={"X-Shaomai-Token": TOKEN})
    assert r.status_code == 204 and r.content == b""
    assert api.get(f"/api/runs/{run_id}").status_code == 404


def test_rename_needs_the_driver_token_and_keeps_the_rest(api, store):
    run_id = store.save(make_run())
    before = store.summary(run_id)
    r = api.patch(f"/api/runs/{run_id}", json={"name": "mine"})
    assert r.status_code == 403 and "rename" in r.json()["detail"]
    r = api.patch(f"/api/runs/{run_id}", json={"name": "mine"}, headers={"X-Shaomai-Token": "x"})
    assert r.status_code == 403
    hdr = {"X-Shaomai-Token": TOKEN}
    assert api.patch("/api/runs/nope", json={"name": "mine"}, headers=hdr).status_code == 404
    assert api.patch(f"/api/runs/{run_id}", json={"name": ""}, headers=hdr).status_code == 422
    assert api.patch(f"/api/runs/{run_id}", json={"name": "   "}, headers=hdr).status_code == 422
    too_long = {"name": "x" * 201}
    assert api.patch(f"/api/runs/{run_id}", json=too_long, headers=hdr).status_code == 422
    r = api.patch(f"/api/runs/{run_id}", json={"name": " 第一次拟合 "}, headers=hdr)
    assert r.status_code == 200 and r.json() == {**before, "name": "第一次拟合"}
    assert api.get("/api/runs").json()[0]["name"] == "第一次拟合"


def test_a_renamed_autosave_becomes_a_run_saved_by_hand(api, store):
    import dataclasses

    sid = "s" * 24
    auto = dataclasses.replace(make_run(), session_hash=hash_token(sid), autosave=True)
    run_id = store.save(auto)
    assert api.get("/api/runs").json() == []
    r = api.get("/api/runs/latest", params={"session": sid})
    assert r.json()["id"] == run_id and r.json()["autosave"] is True
    hdr = {"X-Shaomai-Token": TOKEN}
    assert api.patch(f"/api/runs/{run_id}", json={"name": "keep"}, headers=hdr).status_code == 200
    assert [r["id"] for r in api.get("/api/runs").json()] == [run_id]
    newer = store.save(dataclasses.replace(auto, created=auto.created + 1))  # the next one
    assert {r["id"] for r in store.of_session(sid)} == {run_id, newer}
    assert api.get("/api/runs/latest", params={"session": sid}).json()["id"] == newer


def _file(store) -> dict:
    """An exported run, as a client would upload it."""
    return json.loads(json.dumps(export_json(store.get(store.save(make_run())))))


@pytest.mark.parametrize(
    ("change", "detail"),
    [
        ({"lab": "no-such-lab"}, "lab: this server has no lab 'no-such-lab'"),
        ({"params": {"lr": 5.0}}, "params.lr: Input should be less than or equal to 1"),
        ({"params": {"nope": 1}}, "params.nope: Extra inputs are not permitted"),
        ({"seed": "7"}, "seed: Input should be a valid integer"),
        ({"weights": base64.b64encode(b"junk").decode()}, "weights: not a plain state dict"),
    ],
)
def test_import_refuses_invalid_content_with_the_field(api, store, change, detail):
    data = {**_file(store), **change}
    r = api.post("/api/runs/import", json=data)
    assert r.status_code == 422
    assert r.json()["detail"].startswith(detail), r.json()
    assert len(store.list()) == 1  # nothing stored


def test_import_refuses_non_json(api):
    for body in (b"not json", b'{"seed": NaN}', b"\xff\xfa{}", b""):
        r = api.post("/api/runs/import", content=body)
        assert r.status_code == 422 and r.json()["detail"].startswith("body:"), r.json()


def test_import_over_the_cap_is_413(api, store, monkeypatch, tmp_path):
    data = json.dumps(_file(store)).encode()
    if "max_import_mb" in Settings.model_fields:  # SHAOMAI_MAX_IMPORT_MB
        api.app.state.settings = Settings(data_dir=tmp_path, max_import_mb=0.001)
    else:
        monkeypatch.setattr(runs, "DEFAULT_MAX_IMPORT_MB", 0.001)
    r = api.post("/api/runs/import", content=data)
    assert r.status_code == 413 and "cap for an import" in r.json()["detail"]
    # Chunked, without a Content-Length: the cap applies while reading.
    chunks = (data[i : i + 256] for i in range(0, len(data), 256))
    r = api.post("/api/runs/import", content=chunks)
    assert r.status_code == 413 and "cap for an import" in r.json()["detail"]
    assert len(store.list()) == 1


def test_a_run_over_the_store_cap_is_413(api, store, tmp_path):
    data = json.dumps(_file(store)).encode()
    store.max_run_bytes = 1000
    r = api.post("/api/runs/import", content=data)
    assert r.status_code == 413 and "cap for a saved run" in r.json()["detail"]


def test_openapi_documents_the_routes_exactly(api):
    doc = api.get("/openapi.json").json()
    paths = doc["paths"]
    assert set(paths) == {
        "/api/runs",
        "/api/runs/{run_id}",
        "/api/runs/{run_id}/export.json",
        "/api/runs/import",
        "/api/runs/latest",
        "/api/runs/live/{session_id}/export.json",
    }
    assert set(paths["/api/runs/{run_id}"]) == {"get", "delete", "patch"}
    patch = paths["/api/runs/{run_id}"]["patch"]
    assert {"403", "404", "422"} <= set(patch["responses"])
    schemas = doc["components"]["schemas"]
    listed = paths["/api/runs"]["get"]["responses"]["200"]["content"]["application/json"]
    assert listed["schema"]["items"]["$ref"] == "#/components/schemas/RunSummary"
    body = paths["/api/runs/import"]["post"]["requestBody"]["content"]["application/json"]
    ref = body["schema"]["$ref"].rsplit("/", 1)[1]
    assert ref in schemas and "frames" in schemas[ref]["properties"]
    exported = paths["/api/runs/{run_id}/export.json"]["get"]["responses"]["200"]["content"]
    assert exported["application/json"]["schema"]["$ref"] == body["schema"]["$ref"]
    assert "token" in schemas["ImportedRun"]["properties"]
    params = paths["/api/runs/{run_id}"]["delete"]["parameters"]
    assert {"name": "x-shaomai-token", "in": "header"}.items() <= params[1].items()


def test_export_of_a_live_session_saves_nothing(tmp_path):
    """The page's Export downloads the live run; it used to save it first (two runs)."""
    from backend.app import create_app
    from tests.wsutil import open_lab, step

    with TestClient(create_app(Settings(data_dir=tmp_path, autosave_s=0))) as c:
        with c.websocket_connect("/ws") as ws:
            sid = open_lab(ws, "linear-regression", {"lr": 0.05})["session"]
            step(ws, 4)
            r = c.get(f"/api/runs/live/{sid}/export.json")
            assert r.status_code == 200 and r.headers["content-type"] == "application/json"
            disposition = r.headers["content-disposition"]
            assert disposition == 'attachment; filename="shaomai-linear-regression-step4.json"'
            run = import_json(r.json())
            assert (
                run.step == 4 and run.params["lr"] == 0.05 and len(run.scalars) == 5
            )  # steps 0..4
            assert c.get("/api/runs").json() == []  # nothing saved
            assert c.post("/api/runs/import", content=r.content).status_code == 201
            assert len(c.get("/api/runs").json()) == 1
        assert c.get("/api/runs/live/nope/export.json").status_code == 404
