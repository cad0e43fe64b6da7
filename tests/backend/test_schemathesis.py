"""Promise 9: the HTTP API matches its OpenAPI document and never answers 5xx.

schemathesis (from PyPI) reads /openapi.json from the app in-process (ASGI, no socket) and
sends generated requests, valid and invalid, to every documented operation: /api/health,
/api/labs, /api/labs/{lab_id}, /api/runs (list, summary, export, import, delete) and the
join QR. No response may be a server error, and every status, body and content type must be
the documented one. A saved run is in the store first, so some ids are real. What a random
search can miss is sent by plain loops over the same document: integers past 64 bits to
every integer query parameter, and each error status a route raises (a wrong delete token,
the join rate limit) with the body it documents.

schemathesis' lazy `from_fixture` does not work with pytest 9, so the app is made when this
module is imported (its data in a temporary directory, removed at exit).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    allow_header_conformance,
    positive_data_acceptance,
    status_code_conformance,
)

from backend.app import create_app
from backend.config import Settings
from backend.store import STORE_FILENAME, RunStore
from tests.backend.saved_runs import make_run

DATA = Path(tempfile.mkdtemp(prefix="shaomai-schemathesis-"))
atexit.register(shutil.rmtree, DATA, ignore_errors=True)
_store = RunStore(DATA / STORE_FILENAME)
RUN_ID = _store.save(make_run())
_store.close()
APP = create_app(Settings(data_dir=DATA, join_wait_s=0))  # past its turns a code: 429 at once
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)

FUZZ = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@schema.parametrize()
@FUZZ
def test_no_server_errors_and_documented_bodies(case):
    case.call_and_validate(
        excluded_checks=[
            # Status codes have their own test below.
            status_code_conformance,
            # A 405's `Allow` lists only the first route matching the path (Starlette's
            # router), e.g. GET for /api/runs/{id} though DELETE is there too: no 5xx.
            allow_header_conformance,
            # An import is checked beyond its JSON Schema (frames must decode, weights must
            # be a state dict): a schema-valid file can still be a 422, as documented.
            positive_data_acceptance,
        ]
    )


@schema.parametrize()
@FUZZ
def test_every_status_code_is_documented(case):
    case.call_and_validate(checks=[status_code_conformance])


@pytest.fixture(scope="module")
def api():
    """The same API in its own app object: schemathesis keeps APP's lifespan running, and a
    TestClient on APP would replace (and then close) the store it uses."""
    with TestClient(create_app(Settings(data_dir=DATA)), raise_server_exceptions=False) as c:
        yield c


def _documented(route: str, method: str, status: int) -> dict:
    responses = APP.openapi()["paths"][route][method]["responses"]
    assert str(status) in responses, f"{method.upper()} {route} answers {status}; add it"
    return responses[str(status)]["content"]["application/json"]["schema"]


# Each error status a route raises, reached on purpose (a random search rarely hits a real
# run id with a wrong token): it must be in the route's document, with the body it answers.
ERRORS = [
    ("get", "/api/labs/{lab_id}", "/api/labs/no-such-lab", 404),
    ("get", "/api/join/{code}/qr.svg", "/api/join/ZZZZZZ/qr.svg", 404),
    ("get", "/api/runs/{run_id}", "/api/runs/no-such-run", 404),
    ("get", "/api/runs/{run_id}/export.json", "/api/runs/no-such-run/export.json", 404),
    ("delete", "/api/runs/{run_id}", "/api/runs/no-such-run", 404),
    ("delete", "/api/runs/{run_id}", f"/api/runs/{RUN_ID}", 403),
    ("post", "/api/runs/import", "/api/runs/import", 422),
]


@pytest.mark.parametrize(("method", "route", "url", "status"), ERRORS)
def test_error_statuses_are_documented_with_their_body(api, method, route, url, status):
    r = api.request(method.upper(), url, content=b"{}" if method == "post" else None)
    assert r.status_code == status, r.text[:200]
    schema_ref = _documented(route, method, status)
    body = r.json()
    if schema_ref.get("$ref", "").endswith("/Problem"):
        assert isinstance(body["detail"], str) and set(body) == {"detail"}, body
    else:  # FastAPI's own 422 (request validation)
        assert "detail" in body, body


def test_join_qr_rate_limit_is_documented():
    """Past `join_attempts_per_min` the QR route answers 429 (its own app: a fresh limiter)."""
    route = "/api/join/{code}/qr.svg"
    settings_ = Settings(data_dir=DATA, join_attempts_per_min=3)
    with TestClient(create_app(settings_), raise_server_exceptions=False) as c:
        c.app.state.sessions.shared.clock = lambda: 1000.0  # no turn comes back in the test
        c.app.state.sessions.join_turns.wait_s = 0  # and none is waited for
        codes = ("ZZZZZZ", "YYYYYY", "XXXXXX", "WWWWWW")  # distinct: one asked again is free
        statuses = [c.get(f"/api/join/{w}/qr.svg").status_code for w in codes]
        body = c.get("/api/join/VVVVVV/qr.svg").json()
    assert statuses == [404, 404, 404, 429], statuses
    assert _documented(route, "get", 429)["$ref"].endswith("/Problem")
    assert set(body) == {"detail"} and "too many" in body["detail"], body


def _integer_queries() -> list[tuple[str, str]]:
    doc = APP.openapi()
    out = []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            for p in op.get("parameters", []):
                if p["in"] == "query" and p.get("schema", {}).get("type") == "integer":
                    out.append((f"{method.upper()} {path}", p["name"]))
    return out


@pytest.mark.parametrize(("operation", "name"), _integer_queries())
@pytest.mark.parametrize("value", [2**63, 2**64, -(2**63) - 1, 10**40])
def test_integers_past_64_bits_are_refused_not_crashes(api, operation, name, value):
    method, path = operation.split(" ", 1)
    r = api.request(method, path, params={name: value})
    assert r.status_code < 500, (operation, name, value, r.text[:200])
    assert r.status_code == 422, r.text[:200]


def test_the_saved_run_is_served(api):
    assert api.get(f"/api/runs/{RUN_ID}").json()["id"] == RUN_ID
