"""The door (backend/routes/ws.py): at most `joins_at_once` connections are being accepted
and joined at a time, each holding its place only until what its join queued is sent."""

import pytest
from fastapi.testclient import TestClient

from backend.app import create_app
from backend.config import Settings
from backend.routes import ws as ws_route
from tests.wsutil import open_lab, recv_until, send


@pytest.fixture
def narrow(tmp_path):
    """An app whose door lets one connection in at a time."""
    with TestClient(create_app(Settings(data_dir=tmp_path / "data", joins_at_once=1))) as c:
        yield c


def _free_places(client) -> int:
    async def read():
        import asyncio

        gate = ws_route._gates.get(asyncio.get_running_loop())
        return None if gate is None else gate._value

    return client.portal.call(read)


def test_one_place_at_the_door_still_lets_every_connection_in_one_after_another(narrow):
    # An idle connection (nothing in its URL, nothing sent) does not keep the door shut,
    # and a joiner's place comes back once its ready, history and frame are out.
    with narrow.websocket_connect("/ws") as idle, narrow.websocket_connect("/ws") as teacher:
        ready = open_lab(teacher, "gpt", {})
        viewers = []
        for _ in range(3):
            v = narrow.websocket_connect(f"/ws?session={ready['session']}")
            ws = v.__enter__()
            viewers.append(v)
            recv_until(ws, lambda m: m["type"] == "frame")  # joined and drawn
        send(idle, {"type": "open", "lab": "linear-regression", "params": {}})
        recv_until(idle, lambda m: m["type"] == "ready")
        assert _free_places(narrow) == 1  # every place given back
        for v in viewers:
            v.__exit__(None, None, None)
    assert _free_places(narrow) == 1
