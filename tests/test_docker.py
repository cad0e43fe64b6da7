"""The Docker files agree with each other and with the app (no Docker engine runs here)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from backend.config import Settings
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parent.parent


HOSTED = {"nginx", "shaomai-1", "shaomai-2", "redis", "postgres"}


def compose_service() -> tuple[dict, dict]:
    """(the shaomai service, the whole compose document)."""
    doc = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    default = {name for name, svc in doc["services"].items() if "profiles" not in svc}
    assert default == {"shaomai"}  # `docker compose up` starts the one process, as before
    return doc["services"]["shaomai"], doc


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per instruction, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text()
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    out = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def docker_env() -> dict[str, str]:
    env = {}
    for word, rest in dockerfile():
        if word == "ENV":
            for pair in shlex.split(rest):
                key, _, value = pair.partition("=")
                env[key] = value
    return env


def test_compose_service_port_volume_and_restart():
    svc, doc = compose_service()
    assert svc["build"] == "."
    assert svc["restart"] == "unless-stopped"
    env = svc["environment"]
    assert env["SHAOMAI_HOST"] == "0.0.0.0"
    port = env["SHAOMAI_PORT"]
    assert svc["ports"] == [f"{port}:{port}"]  # a quoted string: YAML 1.1 reads 80:80 as a number
    # The data dir is a named volume, declared at the top level, mounted where the app writes.
    [mount] = svc["volumes"]
    volume, target = mount.split(":")
    assert volume in doc["volumes"] and target == env["SHAOMAI_DATA_DIR"] == "/data"


def test_compose_healthcheck_asks_api_health():
    svc, _ = compose_service()
    check = svc["healthcheck"]
    assert check["test"][0] == "CMD" and check["test"][1:3] == ["python", "-c"]
    assert "/api/health" in check["test"][3] and "SHAOMAI_PORT" in check["test"][3]
    assert check["retries"] >= 1 and check["start_period"].endswith("s")


def test_compose_settings_are_real_settings():
    # A typo in an operator's variable would be silently ignored by the app.
    svc, _ = compose_service()
    fields = {f"SHAOMAI_{name.upper()}" for name in Settings.model_fields}
    ours = {k for k in svc["environment"] if k.startswith("SHAOMAI_")}
    assert ours <= fields, ours - fields
    # ...and each value parses as that setting (the app reads list settings as JSON).
    values = {k.removeprefix("SHAOMAI_").lower(): v for k, v in svc["environment"].items()}
    values = {k: json.loads(v) if str(v).startswith("[") else v for k, v in values.items()}
    Settings(**{k: v for k, v in values.items() if k in Settings.model_fields})


def test_the_hosted_profile_is_nginx_two_replicas_redis_and_postgres():
    _, doc = compose_service()
    services = doc["services"]
    hosted = {name for name, svc in services.items() if "hosted" in svc.get("profiles", [])}
    assert hosted == HOSTED
    fields = {f"SHAOMAI_{name.upper()}" for name in Settings.model_fields}
    replicas = ["shaomai-1", "shaomai-2"]
    for name in replicas:
        svc = services[name]
        env = svc["environment"]
        assert {k for k in env if k.startswith("SHAOMAI_")} <= fields
        assert env["SHAOMAI_REPLICA"] == name
        assert env["SHAOMAI_REDIS_URL"].startswith("redis://redis:")
        assert env["SHAOMAI_DATABASE_URL"].startswith("postgresql+psycopg://")
        assert "@postgres:5432/" in env["SHAOMAI_DATABASE_URL"]
        assert "ports" not in svc  # reached through nginx only
        assert {dep: c["condition"] for dep, c in svc["depends_on"].items()} == {
            "redis": "service_healthy",
            "postgres": "service_healthy",
        }
    for name in HOSTED:
        assert "healthcheck" in services[name], name
    nginx = services["nginx"]
    assert "./deploy/nginx.conf:/etc/nginx/nginx.conf:ro" in nginx["volumes"]
    assert set(nginx["depends_on"]) == set(replicas)
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    upstream = re.findall(r"^\s*server (shaomai-\d+):8000", conf, re.M)
    assert upstream == replicas  # nginx names every replica the compose file starts
    assert f"listen {nginx['ports'][0].split(':')[1]};" in conf
    assert "hash $shaomai_route consistent;" in conf and "$arg_session" in conf
    named = {v.split(":")[0] for svc in services.values() for v in svc.get("volumes", [])}
    assert {v for v in named if not v.startswith(".")} <= set(doc["volumes"])


def test_dockerfile_agrees_with_compose():
    svc, _ = compose_service()
    steps = dockerfile()
    words = [w for w, _ in steps]
    assert steps[0] == ("FROM", "python:3.11-slim")
    env = docker_env()
    for key in ("SHAOMAI_HOST", "SHAOMAI_PORT", "SHAOMAI_DATA_DIR"):
        assert env[key] == str(svc["environment"][key]), key
    assert ("EXPOSE", env["SHAOMAI_PORT"]) in steps
    assert ("VOLUME", json.dumps([env["SHAOMAI_DATA_DIR"]])) in steps
    [health] = [rest for w, rest in steps if w == "HEALTHCHECK"]
    assert json.loads(health[health.index("CMD") + 3 :]) == svc["healthcheck"]["test"][1:]
    assert "--start-period=60s" in health
    assert steps[-1] == ("CMD", '["python", "-m", "backend"]')
    # Not root, and the switch comes before the app runs.
    [user] = [rest for w, rest in steps if w == "USER"]
    assert user not in ("root", "0") and words.index("USER") < len(words) - 1


def test_dockerfile_installs_the_cpu_torch_the_makefile_pins():
    runs = " ".join(rest for w, rest in dockerfile() if w == "RUN")
    pin = re.search(r"torch==[\d.]+", (ROOT / "Makefile").read_text()).group()
    assert f"pip install {pin} --index-url https://download.pytorch.org/whl/cpu" in runs
    assert runs.index(pin) < runs.index("pip install .")  # torch first, then the project


def test_dockerignore_keeps_secrets_and_data_out():
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {".git", ".venv", "data", "tests/artifacts", ".env"} <= ignored


def _healthcheck(port: int) -> int:
    svc, _ = compose_service()
    cmd = [sys.executable, *svc["healthcheck"]["test"][2:]]
    env = {**os.environ, "SHAOMAI_PORT": str(port)}
    return subprocess.run(cmd, env=env, capture_output=True, timeout=30).returncode


@pytest.mark.slow
def test_the_healthcheck_command_works(live_server):
    assert _healthcheck(int(live_server.rsplit(":", 1)[1])) == 0
    assert _healthcheck(free_port()) != 0  # nothing listens there
