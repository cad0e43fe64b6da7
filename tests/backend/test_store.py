"""The saved-runs store: round trips, the delete token, NaN scalars, safe weights, JSON files."""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import os
import pickle
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from backend import wire
from backend.labs import REGISTRY
from backend.run_export import export_json, import_json, parse_json
from backend.saved_run import RunTooLarge, hash_token, pack_weights, unpack_weights
from backend.store import RunStore, StoreError
from tests.backend.saved_runs import TOKEN, make_run, same_run, same_scalars
from tests.hosted import postgres

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.hosted)])
def store(request, tmp_path):
    """The embedded SQLite file, and the same code path on a real PostgreSQL (tests/hosted)."""
    s = RunStore(tmp_path / "runs.db" if request.param == "sqlite" else postgres.shared().url())
    yield s
    s.close()


@pytest.fixture
def sqlite_store(tmp_path):
    s = RunStore(tmp_path / "runs.db")
    yield s
    s.close()


def test_save_list_get_delete(store):
    run = make_run()
    run_id = store.save(run)
    assert run_id and run_id != run.id
    [summary] = store.list()
    assert summary == {
        "id": run_id,
        "lab": "linear-regression",
        "name": "my run",
        "seed": 0,
        "step": 6,
        "created": run.created,
        "scalar_steps": 6,
        "frames": 4,
        "frames_bytes": sum(len(d) for _, d in run.frames),
        "weights_bytes": len(run.weights),
    }
    assert store.summary(run_id) == summary
    got = store.get(run_id)
    assert got.id == run_id and same_run(got, run)
    assert got.token_hash == hash_token(TOKEN)
    # The frames come back byte for byte, so a replay sends exactly what was recorded.
    header, tensors = wire.decode(got.frames[-1][1])
    assert header["step"] == 6 and tensors["weights"].shape == (2,)

    assert store.get("nope") is None and store.summary("nope") is None
    assert store.delete(run_id, "not the token") is False
    assert store.get(run_id) is not None
    assert store.delete(run_id, TOKEN) is True
    assert store.list() == [] and store.get(run_id) is None
    assert store.delete(run_id, TOKEN) is False


def test_list_is_newest_first_and_filters_by_lab(store):
    ids = [store.save(dataclasses.replace(make_run(), created=t)) for t in (1.0, 3.0, 2.0)]
    assert [s["id"] for s in store.list()] == [ids[1], ids[2], ids[0]]
    assert [s["id"] for s in store.list(limit=1, offset=1)] == [ids[2]]
    assert len(store.list(lab="linear-regression")) == 3 and store.list(lab="gpt") == []


def test_a_run_without_owner_cannot_be_deleted(store):
    run_id = store.save(dataclasses.replace(make_run(), token_hash=""))
    assert store.delete(run_id, "") is False and store.delete(run_id, TOKEN) is False


def test_non_finite_scalars_survive(store):
    run = make_run(nan_at=3)
    got = store.get(store.save(run))
    values = dict(got.scalars)[3]
    assert math.isnan(values["loss"]) and values["grad_norm"] == math.inf
    assert values["gap"] == -math.inf
    assert "grad_norm" not in dict(got.scalars)[2]  # a step without a scalar stays without it
    assert same_scalars(got.scalars, run.scalars)


def test_weights_round_trip_and_resume_training(store):
    run = make_run(steps=6)
    state = unpack_weights(store.get(store.save(run)).weights)
    cls = REGISTRY[run.lab]
    params = cls.Params.model_validate(run.params)
    # Resume: a fresh lab loaded with the saved state continues exactly like the original.
    original = cls(params, run.seed, torch.device("cpu"))
    for _ in range(run.step):
        original.step(False)
    resumed = cls(params, run.seed, torch.device("cpu"))
    resumed.load_state_dict(state)
    for _ in range(3):
        a, b = original.step(False), resumed.step(False)
        assert a.scalars == b.scalars


def test_weights_are_never_unpickled(tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    plain_pickle = pickle.dumps({"w": Evil()}, protocol=2)  # the protocol torch.load expects
    buf = pack_weights({"model": {"w": torch.ones(2)}, "x": Evil()})  # torch's zip, evil inside
    for payload in (plain_pickle, buf):
        with pytest.raises(pickle.UnpicklingError):
            unpack_weights(payload)
    assert not marker.exists()
    with pytest.raises(ValueError, match="state dict"):
        unpack_weights(pack_weights([torch.ones(2)]))


def test_reopen_after_a_restart(tmp_path):
    path = tmp_path / "data" / "runs.db"
    store = RunStore(path)
    ids = [store.save(make_run(name=f"run {i}")) for i in range(3)]
    assert store.delete(ids[1], TOKEN)
    store.close()

    again = RunStore(path)
    assert sorted(s["id"] for s in again.list()) == sorted([ids[0], ids[2]])
    assert same_run(again.get(ids[2]), make_run(name="run 2")) is False  # created differs
    assert again.get(ids[2]).name == "run 2" and len(again.get(ids[2]).frames) == 4
    again.close()


def test_oversized_run_is_refused(tmp_path):
    store = RunStore(tmp_path / "runs.db", max_run_bytes=4096)
    run = make_run()
    big = dataclasses.replace(run, frames=[*run.frames, (7, b"\0" * 8192)])
    with pytest.raises(RunTooLarge, match="over the 0 MB cap"):
        store.save(big)
    assert store.list() == []
    store.close()


def test_bad_runs_are_refused(store):
    run = make_run()
    for bad, field in [
        (dataclasses.replace(run, lab="../etc"), "lab"),
        (dataclasses.replace(run, name="x" * 201), "name"),
        (dataclasses.replace(run, seed=-1), "seed"),
    ]:
        with pytest.raises(ValueError, match=field):
            store.save(bad)
    assert store.list() == []


def test_a_damaged_file_is_refused_with_a_clear_error(tmp_path):
    path = tmp_path / "runs.db"
    path.write_bytes(b"this is not a database, it is a shopping list" * 100)
    with pytest.raises(StoreError, match="restore it from a backup"):
        RunStore(path)

    # A real store whose pages were overwritten in the middle.
    path = tmp_path / "damaged.db"
    store = RunStore(path)
    for i in range(3):
        store.save(make_run(name=f"run {i}"))
    store.close()
    data = bytearray(path.read_bytes())
    page = 4096
    data[page : 3 * page] = os.urandom(2 * page)
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match=str(path)):
        RunStore(path)


def test_backup_is_a_consistent_copy(sqlite_store, tmp_path):
    store = sqlite_store
    run_id = store.save(make_run())
    store.backup(tmp_path / "backup.db")
    copy = RunStore(tmp_path / "backup.db")
    assert same_run(copy.get(run_id), store.get(run_id))
    copy.close()
    with sqlite3.connect(tmp_path / "backup.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()


# -- JSON export and import ----------------------------------------------------------------
def test_export_import_round_trip(store):
    run = store.get(store.save(make_run(nan_at=3)))
    text = json.dumps(export_json(run), allow_nan=False)  # no NaN literal: JSON-safe
    data = json.loads(text)
    assert data["format"] == "shaomai-run" and data["version"] == 1
    assert data["scalars"]["values"]["loss"][2] == "NaN"
    assert data["scalars"]["values"]["grad_norm"][:3] == [None, None, "Infinity"]
    back = import_json(parse_json(text.encode()))
    assert back.id == "" and back.token_hash == ""
    assert same_run(back, run)
    # It stores and replays: the frames decode to the same tensors.
    again = store.get(store.save(back))
    assert same_run(again, run)
    assert [wire.decode(d)[0] for _, d in again.frames] == [
        wire.decode(d)[0] for _, d in run.frames
    ]


def _exported():
    return json.loads(json.dumps(export_json(make_run())))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _set(data, path, value):
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


EVIL = pickle.dumps(
    type("X", (), {"__reduce__": lambda self: (os.system, ("true",))})(), protocol=2
)


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (["format"], "something-else", "format:"),
        (["version"], 2, "version:"),
        (["lab"], "Linear Regression!", "lab:"),
        (["lab"], "x" * 65, "lab:"),
        (["seed"], "3", "seed:"),
        (["seed"], -1, "seed:"),
        (["step"], True, "step:"),
        (["name"], 42, "name:"),
        (["params"], [1, 2], "params:"),
        (["extra"], 1, "extra:"),
        (["scalars", "steps"], [2, 1, 3, 4, 5, 6], "scalars: steps must increase"),
        (["scalars", "values", "loss"], [1.0], "scalars: loss: 1 values for 6 steps"),
        (["scalars", "values", "loss", 0], "nan", "scalars.values.loss.0:"),
        (["scalars", "values", "loss", 1], [1], "scalars.values.loss.1:"),
        (["frames", 1, "data"], "!!not base64!!", "frames.1.data: not valid base64"),
        (["frames", 1, "data"], _b64(b"\x10\0\0\0{}"), "frames.1.data: not a valid frame"),
        (["frames", 1, "step"], 3, "frames.1.data: not a valid frame (its header says step 2"),
        (["frames", 1, "step"], -2, "frames.1.step:"),
        (["frames", 2, "step"], 1, "frames.2.step: frames must be in step order"),
        (["frames", 0], {"step": 0}, "frames.0.data: Field required"),
        (["weights"], _b64(b"garbage"), "weights: not a plain state dict"),
        (["weights"], _b64(EVIL), "weights: not a plain state dict (UnpicklingError)"),
    ],
)
def test_import_refuses_bad_files_naming_the_field(path, value, field):
    data = _set(_exported(), path, value)
    with pytest.raises(ValueError) as err:
        import_json(data)
    assert str(err.value).startswith(field), str(err.value)


def test_import_refuses_frames_that_lie_about_their_tensors():
    data = _exported()
    buf = base64.b64decode(data["frames"][1]["data"])
    header, _ = wire.decode(buf)
    for change in ({"length": 10**6}, {"offset": -8}, {"shape": [-1]}, {"dtype": "f64"}):
        bad = dict(header, tensors=[dict(header["tensors"][0], **change)])
        data["frames"][1]["data"] = _b64(wire.patch_header(buf, bad))
        with pytest.raises(ValueError, match="frames.1.data: not a valid frame"):
            import_json(data)


def test_import_refuses_non_json_and_oversized_files():
    with pytest.raises(ValueError, match="body: not a JSON document"):
        parse_json(b'{"seed": NaN}')
    with pytest.raises(ValueError, match="body: not a JSON document"):
        parse_json(b"[" * 100_000)
    with pytest.raises(ValueError, match="body: a run file is a JSON object"):
        import_json([1, 2])
    with pytest.raises(RunTooLarge, match="over the 0 MB cap"):
        import_json(_exported(), max_bytes=1000)


def test_operator_commands_check_and_backup(tmp_path):
    """`python -m backend.store check|backup`, as a cron job runs them (docs/deploy.md)."""
    store = RunStore(tmp_path / "runs.db")
    run_id = store.save(make_run())  # the app keeps running while the backup is taken

    def cli(*args):
        cmd = [sys.executable, "-m", "backend.store", *map(str, args)]
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)

    done = cli("backup", tmp_path / "copy.db", "--db", tmp_path / "runs.db")
    assert done.returncode == 0, done.stderr
    copy = RunStore(tmp_path / "copy.db")  # opening runs the same integrity check
    assert same_run(copy.get(run_id), store.get(run_id))
    copy.close()
    store.close()
    (tmp_path / "bad.db").write_bytes(b"\0" * 8192)
    bad = cli("check", "--db", tmp_path / "bad.db")
    assert bad.returncode == 1 and "restore it from a backup" in bad.stderr


def test_from_settings_is_the_file_under_data_dir_unless_a_url_is_set(tmp_path):
    """What app.py opens: SHAOMAI_DATABASE_URL when set, else data_dir/runs.db (SQLite)."""
    from backend.config import Settings

    store = RunStore.from_settings(Settings(data_dir=tmp_path / "data", max_run_mb=1))
    assert store.sqlite and store.path == tmp_path / "data" / "runs.db"
    assert store.max_run_bytes == 2**20 and store.path.exists()
    store.close()
    url = f"sqlite:///{tmp_path / 'other.db'}"
    store = RunStore.from_settings(Settings(data_dir=tmp_path / "data", database_url=url))
    assert store.sqlite and store.path == tmp_path / "other.db"  # the same pragmas and checks
    run_id = store.save(make_run())
    store.close()
    with sqlite3.connect(tmp_path / "other.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA auto_vacuum").fetchone() == (2,)  # incremental
        assert db.execute("SELECT id FROM runs").fetchall() == [(run_id,)]
    db.close()
