"""Keep this run: a run's scalar history kept beside the next runs, in the session and saved."""

from __future__ import annotations

import json
import sqlite3

import pytest

from backend import protocol, store
from backend.run_export import export_json, import_json
from backend.store import RunStore
from backend.timeline import Timeline
from tests.backend.saved_runs import make_run
from tests.wsutil import open_lab, recv, recv_until, send, step

LAB = "linear-regression"


def keep(ws, **extra) -> list[dict]:
    send(ws, {"type": "control", "action": "keep", **extra})
    kept, _ = recv_until(ws, lambda m: m["type"] in ("kept", "error"))
    assert kept["type"] == "kept", kept
    return kept["runs"]


def test_keep_survives_reset_rebuild_and_reload(client):
    with client.websocket_connect("/ws") as ws:
        ready = open_lab(ws, LAB, {"lr": 0.05}, seed=3)
        assert ready["kept"] == []
        step(ws, 4)
        (run,) = keep(ws, label="lr 0.05")
        assert run["label"] == "lr 0.05" and run["seed"] == 3 and run["params"]["lr"] == 0.05
        assert [r[0] for r in run["rows"]] == [0, 1, 2, 3, 4]
        losses = [r[1]["loss"] for r in run["rows"]]
        assert losses == sorted(losses, reverse=True) and set(run["rows"][0][1]) >= {"loss", "b"}
        send(ws, {"type": "control", "action": "reset"})
        recv_until(ws, lambda m: m["type"] == "status" and m["run"] == 1)
        send(ws, {"type": "set", "params": {"dataset": "live-stream", "features": "zscore"}})
        reply, _ = recv_until(ws, lambda m: m["type"] == "params")
        assert reply["reset"]
        step(ws, 2)
    with client.websocket_connect("/ws") as ws:  # a reload: join again
        send(ws, {"type": "join", "session": ready["session"], "token": ready["token"]})
        again = recv(ws)
        assert again["type"] == "ready" and again["run"] == 2 and again["step"] == 2
        assert again["kept"] == [run]


def test_every_connection_hears_kept_and_a_viewer_cannot_keep(client):
    with client.websocket_connect("/ws") as driver:
        ready = open_lab(driver, LAB)
        step(driver, 2)
        with client.websocket_connect(f"/ws?session={ready['session']}") as viewer:
            recv_until(viewer, lambda m: m["type"] == "ready")
            for action in ("keep", "unkeep"):
                send(viewer, {"type": "control", "action": action})
                err, _ = recv_until(viewer, lambda m: m["type"] == "error")
                assert err["code"] == "forbidden" and err["key"] == "err.viewer"
            runs = keep(driver)
            heard, _ = recv_until(viewer, lambda m: m["type"] == "kept")
            assert heard["runs"] == runs and runs[0]["label"] == "#1"


def test_at_most_two_the_oldest_goes_and_unkeep(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, LAB)
        first = keep(ws)[0]
        step(ws, 1)
        second = keep(ws)[-1]
        step(ws, 1)
        runs = keep(ws)
        assert len(runs) == 2 and runs[0] == second and first not in runs
        assert [r["label"] for r in runs] == ["#2", "#3"]
        assert len(runs[1]["rows"]) == 3
        send(ws, {"type": "control", "action": "unkeep", "id": "nope"})
        err, _ = recv_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == "not_found" and err["key"] == "err.kept_none"
        send(ws, {"type": "control", "action": "unkeep", "id": second["id"]})
        left, _ = recv_until(ws, lambda m: m["type"] == "kept")
        assert left["runs"] == [runs[1]]
        send(ws, {"type": "control", "action": "unkeep"})
        left, _ = recv_until(ws, lambda m: m["type"] == "kept")
        assert left["runs"] == []


def test_kept_rows_are_thinned_keeping_the_last(client, monkeypatch):
    monkeypatch.setattr(protocol, "KEPT_MAX_ROWS", 4)
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, LAB)
        step(ws, 9)
        (run,) = keep(ws)
        assert [r[0] for r in run["rows"]] == [0, 3, 6, 9]


def test_timeline_rows_thin_evenly_to_the_cap():
    tl = Timeline(2**20)
    for s in range(12_001):
        tl.add_scalars(s, {"loss": float(s)})
    rows = tl.scalar_rows(5000)
    steps = [s for s, _ in rows]
    assert len(rows) <= 5000 and steps[-1] == 12_000 and steps == sorted(steps)
    assert len(tl.scalar_rows(20_000)) == 12_001
    assert Timeline(1).scalar_rows(5000) == []


def test_fork_brings_the_kept_runs(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, LAB)
        runs = keep(ws)
        send(ws, {"type": "fork"})
        forked, _ = recv_until(ws, lambda m: m["type"] == "ready")
        assert forked["kept"] == runs


def test_save_then_reopen_has_the_kept_runs(client):
    with client.websocket_connect("/ws") as ws:
        open_lab(ws, LAB)
        step(ws, 3)
        runs = keep(ws, label="before")
        send(ws, {"type": "control", "action": "reset"})
        step(ws, 1)
        send(ws, {"type": "save", "name": "with kept"})
        saved, _ = recv_until(ws, lambda m: m["type"] == "saved")
    for mode in ("replay", "resume"):
        with client.websocket_connect("/ws") as ws:
            send(ws, {"type": "open", "run": saved["run"], "mode": mode})
            again, _ = recv_until(ws, lambda m: m["type"] == "ready")
            assert again["kept"] == runs and again["step"] == 1
    exported = client.get(f"/api/runs/{saved['run']}/export.json").json()
    assert exported["kept"] == runs


def test_kept_runs_round_trip_through_the_store_and_a_file(tmp_path):
    kept = [
        {
            "id": "a1",
            "label": "Adam",
            "params": {"lr": 0.1},
            "seed": 0,
            "rows": [[0, {"loss": 1.0}]],
        },
        {"id": "b2", "label": "#2", "params": {}, "seed": 1, "rows": [[5, {"loss": "NaN"}]]},
    ]
    run = make_run()
    run = type(run)(**{**run.__dict__, "kept": kept})
    s = RunStore(tmp_path / "runs.db")
    back = s.get(s.save(run))
    assert back.kept == kept
    data = json.loads(json.dumps(export_json(back), allow_nan=False))
    assert data["kept"] == kept
    assert json.loads(json.dumps(import_json(data).kept)) == kept
    s.close()


@pytest.mark.parametrize(
    ("kept", "field"),
    [
        (
            [{"id": "a", "label": "x", "params": {}, "seed": 0, "rows": [["1", {}]]}],
            "kept.0.rows.0.0",
        ),
        (
            [{"id": "a", "label": "x", "params": {}, "seed": 0, "rows": [[1, {"l": "2"}]]}],
            "kept.0.rows.0.1.l",
        ),
        ([{"id": "a", "label": "x" * 65, "params": {}, "seed": 0, "rows": []}], "kept.0.label"),
        (
            [{"id": "a", "label": "x", "params": {}, "seed": 0, "rows": [], "extra": 1}],
            "kept.0.extra",
        ),
        (
            [{"id": str(i), "label": "", "params": {}, "seed": 0, "rows": []} for i in range(3)],
            "kept",
        ),
    ],
)
def test_import_refuses_bad_kept_runs_naming_the_field(kept, field):
    data = export_json(make_run())
    data["kept"] = kept
    with pytest.raises(ValueError) as err:
        import_json(data)
    assert str(err.value).startswith(f"{field}:"), err.value


def test_a_schema_1_store_gains_the_kept_column(tmp_path):
    path = tmp_path / "runs.db"
    old = store._SCHEMA.replace(",\n    kept          TEXT NOT NULL DEFAULT '[]'", "")
    assert "kept" not in old.split("-- JSON: the runs kept")[0]
    db = sqlite3.connect(path)
    db.executescript(f"BEGIN; {old} PRAGMA user_version = 1; COMMIT;")
    db.close()
    s = RunStore(path)
    run_id = s.save(make_run())
    assert s.get(run_id).kept == []
    s.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == store.SCHEMA_VERSION == 2
    db.close()
