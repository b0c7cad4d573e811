"""Every route's happy path, with the values it must answer (both stores)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient

from tests.api.helpers import episode, fact, problem


def _base(tenant: str) -> str:
    return f"/v1/tenants/{tenant}"


def _current(client: TestClient, tenant: str, **params: str) -> list[dict[str, object]]:
    r = client.get(f"{_base(tenant)}/facts", params=params)
    assert r.status_code == 200, r.text
    facts: list[dict[str, object]] = r.json()["facts"]
    return facts


def test_episode_create_get_delete_repairs_intervals(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    r = client.post(
        f"{base}/episodes",
        json=episode(
            "e1",
            source="chat",
            session_id="s1",
            metadata={"channel": "web"},
            facts=[
                {
                    "subject": "mira",
                    "subject_type": "Person",
                    "predicate": "passport_deadline",
                    "value": "2026-07-15",
                }
            ],
        ),
    )
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["episode_id"] == "e1"
    assert body["created"] is True
    assert body["status"] == "stored"
    assert body["source"] == "chat"
    assert body["session_id"] == "s1"
    assert body["metadata"] == {"channel": "web"}
    assert body["recorded_at"].endswith("Z")
    [f1] = body["facts"]
    # Inline deltas default to the episode as source and its occurred_at as valid_from.
    assert f1["source_episode_id"] == "e1"
    assert f1["valid_from"] == "2026-06-01T09:00:00Z"
    assert f1["value"] == "2026-07-15"
    assert f1["subject_type"] == "Person"

    got = client.get(f"{base}/episodes/e1")
    assert got.status_code == 200
    g = got.json()
    assert g["status"] == "stored"
    assert g["last_error"] is None
    assert g["content"] == "content of e1"
    assert [f["fact_id"] for f in g["facts"]] == [f1["fact_id"]]

    assert (
        client.post(f"{base}/episodes", json=episode("e2", "2026-06-03T10:00:00Z")).status_code
        == 201
    )
    w = client.post(
        f"{base}/facts",
        json={
            "facts": [
                fact(
                    "mira",
                    "passport_deadline",
                    value="2026-06-30",
                    valid_from="2026-06-03T10:00:00Z",
                    source_episode_id="e2",
                )
            ]
        },
    )
    assert w.status_code == 201, w.text
    [now] = _current(client, tenant, subject="mira", predicate="passport_deadline")
    assert now["value"] == "2026-06-30"

    d = client.delete(f"{base}/episodes/e2")
    assert d.status_code == 200, d.text
    assert d.json() == {"episode_id": "e2", "facts_removed": 1, "facts_restored": 1}
    [back] = _current(client, tenant, subject="mira", predicate="passport_deadline")
    assert back["value"] == "2026-07-15"
    assert back["valid_to"] is None
    assert back["source_episode_id"] == "e1"
    problem(client.get(f"{base}/episodes/e2"), 404)


def test_fact_batch_write_read_and_redelivery(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    client.post(f"{base}/episodes", json=episode("e9", "2026-01-01T00:00:00Z"))
    batch = {
        "facts": [
            fact(
                "mira",
                "passport_deadline",
                value="2026-07-15",
                subject_type="Person",
                confidence=0.9,
                memory_type="profile",
            ),
            fact(
                "cust-7",
                "holds_account",
                object="acct-1",
                subject_type="Customer",
                object_type="Account",
                valid_from="2026-01-01T00:00:00Z",
                source_episode_id="e9",
            ),
        ],
        "conflict_policy": "reject",
    }
    r = client.post(f"{base}/facts", json=batch)
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["outcomes"] == ["created", "created"]
    first, second = body["facts"]  # request order
    assert (first["subject"], first["predicate"], first["value"]) == (
        "mira",
        "passport_deadline",
        "2026-07-15",
    )
    assert first["confidence"] == 0.9
    assert first["memory_type"] == "profile"
    assert first["schema_version"] == 0
    assert first["supersedes"] == []
    assert (second["subject"], second["object"], second["object_type"]) == (
        "cust-7",
        "acct-1",
        "Account",
    )
    assert second["value"] is None
    assert second["valid_to"] is None
    assert second["recorded_at"].endswith("Z")

    again = client.post(f"{base}/facts", json=batch)
    assert again.status_code == 201
    assert again.json()["outcomes"] == ["unchanged", "unchanged"]
    assert [f["fact_id"] for f in again.json()["facts"]] == [first["fact_id"], second["fact_id"]]
    history = client.get(
        f"{base}/facts/history", params={"subject": "mira", "predicate": "passport_deadline"}
    ).json()
    assert len(history["facts"]) == 1  # no new version

    [held] = _current(client, tenant, subject="cust-7", predicate="holds_account")
    assert held["object"] == "acct-1"
    profile = _current(client, tenant, memory_type="profile")
    assert [f["fact_id"] for f in profile] == [first["fact_id"]]
    by_object = _current(client, tenant, object="acct-1")
    assert [f["fact_id"] for f in by_object] == [second["fact_id"]]


def test_retract_ends_validity(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    w = client.post(f"{base}/facts", json={"facts": [fact("mira", "city", value="Lyon")]})
    fid = w.json()["facts"][0]["fact_id"]
    r = client.post(f"{base}/facts/{fid}/retract", json={"valid_to": "2026-06-10T00:00:00Z"})
    assert r.status_code == 200, r.text
    assert r.json()["fact_id"] == fid
    assert r.json()["valid_to"] == "2026-06-10T00:00:00Z"
    before = _current(client, tenant, subject="mira", as_of="2026-06-09T00:00:00Z")
    after = _current(client, tenant, subject="mira", as_of="2026-06-11T00:00:00Z")
    assert [f["value"] for f in before] == ["Lyon"]
    assert after == []


def test_retract_without_body_ends_now(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    w = client.post(f"{base}/facts", json={"facts": [fact("mira", "city", value="Lyon")]})
    fid = w.json()["facts"][0]["fact_id"]
    t0 = datetime.now(UTC)
    r = client.post(f"{base}/facts/{fid}/retract")
    assert r.status_code == 200, r.text
    ended = datetime.fromisoformat(r.json()["valid_to"].replace("Z", "+00:00"))
    assert t0 - timedelta(seconds=1) <= ended <= datetime.now(UTC) + timedelta(seconds=1)
    assert _current(client, tenant, subject="mira") == []
    problem(client.post(f"{base}/facts/f_missing/retract"), 404)


def test_history_and_known_at(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    client.post(f"{base}/episodes", json=episode("e2", "2026-06-03T10:00:00Z"))
    client.post(f"{base}/facts", json={"facts": [fact("mira", "city", value="Lyon")]})
    between = client.get("/healthz")  # any request; the instant below is after the first write
    assert between.status_code == 200
    mid = datetime.now(UTC).isoformat()
    client.post(
        f"{base}/facts",
        json={
            "facts": [
                fact(
                    "mira",
                    "city",
                    value="Paris",
                    valid_from="2026-06-03T10:00:00Z",
                    source_episode_id="e2",
                )
            ]
        },
    )
    h = client.get(f"{base}/facts/history", params={"subject": "mira", "predicate": "city"})
    assert h.status_code == 200
    rows = [
        (f["value"], f["valid_from"], f["valid_to"], f["source_episode_id"])
        for f in h.json()["facts"]
    ]
    assert rows == [
        ("Lyon", "2026-06-01T09:00:00Z", "2026-06-03T10:00:00Z", "e1"),
        ("Paris", "2026-06-03T10:00:00Z", None, "e2"),
    ]
    old = client.get(
        f"{base}/facts/history", params={"subject": "mira", "predicate": "city", "known_at": mid}
    )
    assert [(f["value"], f["valid_to"]) for f in old.json()["facts"]] == [("Lyon", None)]
    then = _current(client, tenant, subject="mira", as_of="2026-06-04T00:00:00Z", known_at=mid)
    assert [f["value"] for f in then] == ["Lyon"]


def test_facts_pagination_is_pinned(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    subjects = [f"s{i}" for i in range(5)]
    client.post(
        f"{base}/facts", json={"facts": [fact(s, "rank", value=i) for i, s in enumerate(subjects)]}
    )
    p1 = client.get(f"{base}/facts", params={"predicate": "rank", "limit": 2}).json()
    assert [f["subject"] for f in p1["facts"]] == ["s0", "s1"]
    assert isinstance(p1["next_cursor"], str)
    # Written after the first page: a later page must not show it (known_at is pinned).
    client.post(f"{base}/facts", json={"facts": [fact("s9", "rank", value=9)]})
    p2 = client.get(
        f"{base}/facts", params={"predicate": "rank", "limit": 2, "cursor": p1["next_cursor"]}
    ).json()
    assert [f["subject"] for f in p2["facts"]] == ["s2", "s3"]
    p3 = client.get(
        f"{base}/facts", params={"predicate": "rank", "limit": 2, "cursor": p2["next_cursor"]}
    ).json()
    assert [f["subject"] for f in p3["facts"]] == ["s4"]
    assert p3["next_cursor"] is None
    fresh = _current(client, tenant, predicate="rank")
    assert [f["subject"] for f in fresh] == [*subjects, "s9"]

    other_filter = client.get(
        f"{base}/facts", params={"predicate": "other", "cursor": p1["next_cursor"]}
    )
    assert problem(other_filter, 422)["errors"][0]["field"] == "cursor"
    garbage = client.get(f"{base}/facts", params={"cursor": "not-a-cursor"})
    assert problem(garbage, 422)["errors"][0]["field"] == "cursor"
    moved = client.get(
        f"{base}/facts",
        params={"predicate": "rank", "cursor": p1["next_cursor"], "as_of": "2020-01-01T00:00:00Z"},
    )
    assert problem(moved, 422)["errors"][0]["field"] == "as_of"
    problem(client.get(f"{base}/facts", params={"limit": 0}), 422)
    problem(client.get(f"{base}/facts", params={"limit": 1001}), 422)


def _graph(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e9", "2026-01-01T00:00:00Z"))
    r = client.post(
        f"{base}/facts",
        json={
            "facts": [
                fact(
                    "cust-7",
                    "holds_account",
                    object="acct-1",
                    subject_type="Customer",
                    object_type="Account",
                    valid_from="2026-01-01T00:00:00Z",
                    source_episode_id="e9",
                ),
                fact(
                    "acct-1",
                    "governed_by",
                    object="policy-9",
                    object_type="Policy",
                    valid_from="2026-02-01T00:00:00Z",
                    source_episode_id="e9",
                ),
                fact(
                    "cust-7",
                    "segment",
                    value="retail",
                    valid_from="2026-01-01T00:00:00Z",
                    source_episode_id="e9",
                ),
            ]
        },
    )
    assert r.status_code == 201, r.text


def test_entity_with_facts(client: TestClient, tenant: str) -> None:
    _graph(client, tenant)
    base = _base(tenant)
    r = client.get(f"{base}/entities/acct-1")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["entity_id"] == "acct-1"
    assert body["entity_type"] == "Account"
    got = sorted((f["subject"], f["predicate"]) for f in body["facts"])
    assert got == [("acct-1", "governed_by"), ("cust-7", "holds_account")]
    early = client.get(f"{base}/entities/acct-1", params={"as_of": "2026-01-15T00:00:00Z"}).json()
    assert [(f["subject"], f["predicate"]) for f in early["facts"]] == [("cust-7", "holds_account")]
    problem(client.get(f"{base}/entities/nobody"), 404)


def test_neighbors_depth_predicates_direction(client: TestClient, tenant: str) -> None:
    _graph(client, tenant)
    base = _base(tenant)

    def ids(**params: object) -> list[str]:
        r = client.get(f"{base}/entities/cust-7/neighbors", params=params)
        assert r.status_code == 200, r.text
        return sorted(e["entity_id"] for e in r.json()["entities"])

    assert ids() == ["acct-1", "cust-7"]
    assert ids(depth=2) == ["acct-1", "cust-7", "policy-9"]
    assert ids(depth=2, predicates="governed_by") == ["cust-7"]
    assert ids(depth=2, as_of="2026-01-15T00:00:00Z") == ["acct-1", "cust-7"]
    assert ids(direction="in") == ["cust-7"]
    inbound = client.get(f"{base}/entities/acct-1/neighbors", params={"direction": "in"}).json()
    assert sorted(e["entity_id"] for e in inbound["entities"]) == ["acct-1", "cust-7"]
    assert [f["predicate"] for f in inbound["facts"]] == ["holds_account"]
    problem(client.get(f"{base}/entities/cust-7/neighbors", params={"depth": 5}), 422)
    problem(client.get(f"{base}/entities/cust-7/neighbors", params={"depth": 0}), 422)
    problem(client.get(f"{base}/entities/nobody/neighbors"), 404)


def test_schema_get_put_versions(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    default = client.get(f"{base}/schema")
    assert default.status_code == 200
    assert default.json()["version"] == 0
    assert default.json()["mode"] == "permissive"
    strict = {
        "mode": "strict",
        "version": 41,  # ignored: the server assigns versions
        "entity_types": [{"name": "Person"}],
        "predicates": [
            {
                "name": "passport_deadline",
                "value_type": "date",
                "subject_types": ["Person"],
                "memory_type": "profile",
            }
        ],
    }
    r1 = client.put(f"{base}/schema", json=strict)
    assert r1.status_code == 200, r1.text
    assert r1.json()["version"] == 1
    r2 = client.put(f"{base}/schema", json=strict)
    assert r2.json()["version"] == 2
    got = client.get(f"{base}/schema").json()
    assert got["version"] == 2
    assert got["mode"] == "strict"
    assert [p["name"] for p in got["predicates"]] == ["passport_deadline"]

    client.post(f"{base}/episodes", json=episode("e1"))
    ok = client.post(
        f"{base}/facts",
        json={
            "facts": [fact("mira", "passport_deadline", value="2026-07-15", subject_type="Person")]
        },
    )
    assert ok.status_code == 201, ok.text
    assert ok.json()["facts"][0]["schema_version"] == 2
    assert ok.json()["facts"][0]["memory_type"] == "profile"
    bad = client.post(
        f"{base}/facts",
        json={
            "facts": [
                fact(
                    "mira",
                    "passport_deadline",
                    value="soon",
                    subject_type="Person",
                    valid_from="2026-06-02T00:00:00Z",
                ),
                fact("mira", "shoe_size", value=42, subject_type="Person"),
            ]
        },
    )
    errors = problem(bad, 422)["errors"]
    assert {(e["index"], e["field"]) for e in errors} == {(0, "value"), (1, "predicate")}

    dup = dict(strict, predicates=strict["predicates"] * 2)
    problem(client.put(f"{base}/schema", json=dup), 422)
    assert client.get(f"{base}/schema").json()["version"] == 2


def test_service_routes(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz").json()
    assert ready["status"] == "ready"
    assert set(ready["embeddings"]["kinds"]) == {"fact", "entity", "episode"}
    m = client.get("/metrics")
    assert m.status_code == 200
    assert m.headers["content-type"].startswith("text/plain")
    assert "sgam_http_requests_total" in m.text
    docs = client.get("/docs")
    assert docs.status_code == 200
    assert "swagger" in docs.text.lower()
    spec = client.get("/openapi.json").json()
    assert spec["info"]["title"] == "sgam"
    assert "/v1/tenants/{tenant}/facts" in spec["paths"]
