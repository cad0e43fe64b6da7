def test_health(client):
    r = client.get("/api/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["version"]


def test_catalog_lists_labs_with_schema(client):
    labs = client.get("/api/labs").json()
    by_id = {lab["id"]: lab for lab in labs}
    lr = by_id["linear-regression"]
    assert lr["chapter"] == 1
    assert set(lr["title"]) == {"zh", "en"} and set(lr["description"]) == {"zh", "en"}
    props = lr["schema"]["properties"]
    assert props["lr"]["minimum"] == 1e-12 and props["lr"]["maximum"] == 1.0
    assert props["lr"]["scale"] == "log" and props["lr"]["live"] is True
    assert props["dataset"]["enum"] == ["two-points", "live-stream", "custom"]
    assert [lab["chapter"] for lab in labs] == sorted(lab["chapter"] for lab in labs)
    assert client.get("/api/labs/linear-regression").json()["id"] == "linear-regression"
    assert client.get("/api/labs/nope").status_code == 404


def test_every_param_is_bounded_and_labelled(client):
    for lab in client.get("/api/labs").json():
        for name, p in lab["schema"]["properties"].items():
            assert set(p["label"]) == {"zh", "en"}, (lab["id"], name)
            if p.get("type") in ("number", "integer"):
                assert "maximum" in p or "exclusiveMaximum" in p, (lab["id"], name)
                assert "minimum" in p or "exclusiveMinimum" in p, (lab["id"], name)
            if p.get("type") == "string" and "enum" not in p:
                assert "maxLength" in p, (lab["id"], name)
            if p.get("type") == "array":
                assert "maxItems" in p, (lab["id"], name)


def test_openapi_and_static_frontend(client):
    assert client.get("/docs").status_code == 200
    assert "/api/labs" in client.get("/openapi.json").json()["paths"]
    assert "lab.html" in client.get("/").text or client.get("/").status_code == 200
    js = client.get("/vendor/plotly.min.js")
    assert js.status_code == 200 and len(js.content) > 1_000_000
    assert client.get("/lab.html").status_code == 200


def test_every_lab_module_imports():
    from backend.labs import FAILED, load_all

    load_all()
    assert FAILED == {}
