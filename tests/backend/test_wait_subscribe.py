"""`/ws?session=ID&wait=subscribe` (a phone's page): no frame before the connection's first
`subscribe`, which brings the latest frame cut to it; a page that never subscribes gets
whole frames after subscriptions.WAIT_S (docs/streams.md, "A phone joining")."""

from backend import subscriptions
from tests.wsutil import open_lab, recv_until, send, step

TEXT_MODEL = {"n_layers": 2, "n_heads": 4}


def test_a_viewer_waiting_for_its_subscription_is_sent_no_frame_before_it(client):
    with client.websocket_connect("/ws") as teacher:
        sid = open_lab(teacher, "gpt", TEXT_MODEL)["session"]
        step(teacher, 3)
        with client.websocket_connect(f"/ws?session={sid}&wait=subscribe") as phone:
            recv_until(phone, lambda m: m["type"] == "ready")
            step(teacher, 2)  # frames published while it waits: none reaches it
            # A round trip: a bad subscription answers. Everything sent before that error
            # is what the phone got while waiting.
            send(phone, {"type": "subscribe", "layer": 9})
            _, before = recv_until(phone, lambda m: m["type"] == "error")
            assert not [m for m in before if m["type"] == "frame"], before
            send(phone, {"type": "subscribe", "layer": 1, "head": 2})
            first, _ = recv_until(phone, lambda m: m["type"] == "frame")
            # The latest step's frame, cut to the subscription.
            assert first["step"] == 5
            assert first["header"]["slice"]["layer"] == 1
            assert first["header"]["slice"]["head"] == 2
            assert set(first["tensors"]) >= {"blocks.1.attn.hook_pattern"}
            assert "blocks.0.attn.hook_pattern" not in first["tensors"]
            step(teacher, 1)
            nxt, _ = recv_until(phone, lambda m: m["type"] == "frame")
            assert nxt["step"] == 6 and nxt["header"]["slice"]["layer"] == 1


def test_a_page_that_never_subscribes_gets_whole_frames_after_the_wait(client, monkeypatch):
    monkeypatch.setattr(subscriptions, "WAIT_S", 0.2)
    with client.websocket_connect("/ws") as teacher:
        sid = open_lab(teacher, "gpt", TEXT_MODEL)["session"]
        step(teacher, 2)
        with client.websocket_connect(f"/ws?session={sid}&wait=subscribe") as page:
            recv_until(page, lambda m: m["type"] == "ready")
            first, _ = recv_until(page, lambda m: m["type"] == "frame")
            assert first["step"] == 2 and "slice" not in first["header"]
            assert "blocks.0.attn.hook_pattern" in first["tensors"]
            step(teacher, 1)
            nxt, _ = recv_until(page, lambda m: m["type"] == "frame")
            assert nxt["step"] == 3 and "slice" not in nxt["header"]


def test_without_wait_a_joiner_gets_the_latest_frame_at_once(client):
    with client.websocket_connect("/ws") as teacher:
        sid = open_lab(teacher, "gpt", TEXT_MODEL)["session"]
        step(teacher, 2)
        with client.websocket_connect(f"/ws?session={sid}") as desk:
            _, before = recv_until(desk, lambda m: m["type"] == "frame")
            assert any(m["type"] == "ready" for m in before)


def test_the_catalog_says_which_page_subscribes_on_a_phone(client):
    labs = {e["id"]: e for e in client.get("/api/labs").json()}
    assert labs["gpt"]["phone_slice"] is True
    assert labs["real-bert"]["phone_slice"] is False  # layers, but its page takes them all
    assert client.get("/api/labs/gpt").json()["phone_slice"] is True
