"""Idempotency, conflicts, atomicity and every error answer (problem+json, nothing written)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.settings import Settings
from graph.errors import StoreUnavailableError
from graph.port import Store
from graph.stores.sqlite.store import SqliteStore
from tests.api.conftest import AppFactory
from tests.api.helpers import episode, fact, problem


def _base(tenant: str) -> str:
    return f"/v1/tenants/{tenant}"


def _facts(client: TestClient, tenant: str, **params: str) -> list[dict[str, Any]]:
    r = client.get(f"{_base(tenant)}/facts", params=params)
    assert r.status_code == 200, r.text
    out: list[dict[str, Any]] = r.json()["facts"]
    return out


# -- idempotency -----------------------------------------------------------------------
def test_same_episode_twice_is_200_and_writes_nothing(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    body = episode("e1", facts=[{"subject": "mira", "predicate": "city", "value": "Lyon"}])
    first = client.post(f"{base}/episodes", json=body)
    assert first.status_code == 201
    # Same content again, even with other inline facts: 200, the stored episode, no writes.
    again = client.post(
        f"{base}/episodes",
        json={**body, "facts": [{"subject": "mira", "predicate": "city", "value": "Paris"}]},
    )
    assert again.status_code == 200, again.text
    a = again.json()
    assert a["created"] is False
    assert a["recorded_at"] == first.json()["recorded_at"]
    assert [f["fact_id"] for f in a["facts"]] == [first.json()["facts"][0]["fact_id"]]
    assert [f["value"] for f in _facts(client, tenant, subject="mira")] == ["Lyon"]


def test_same_episode_other_content_is_409(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    assert client.post(f"{base}/episodes", json=episode("e1")).status_code == 201
    clash = client.post(f"{base}/episodes", json={**episode("e1"), "content": "something else"})
    body = problem(clash, 409)
    assert body["episode_id"] == "e1"
    assert client.get(f"{base}/episodes/e1").json()["content"] == "content of e1"


# -- conflicts -------------------------------------------------------------------------
def test_fact_conflict_409_names_fact_and_source(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    client.post(f"{base}/episodes", json=episode("e2"))
    first = client.post(f"{base}/facts", json={"facts": [fact("mira", "city", value="Lyon")]})
    fid = first.json()["facts"][0]["fact_id"]
    batch = {
        "facts": [
            fact("mira", "age", value=40, source_episode_id="e2"),
            fact("mira", "city", value="Paris", source_episode_id="e2"),
        ]
    }
    body = problem(client.post(f"{base}/facts", json=batch), 409)
    assert body["conflicting_fact_id"] == fid
    assert body["conflicting_source_episode_id"] == "e1"
    assert body["source_episode_id"] == "e2"
    assert body["index"] == 1
    assert fid in body["detail"]
    # Nothing of the batch was written, item 0 included.
    assert [f["value"] for f in _facts(client, tenant, subject="mira")] == ["Lyon"]

    kept = client.post(
        f"{base}/facts", json={**batch, "conflict_policy": "highest_confidence_wins"}
    )
    assert kept.status_code == 201, kept.text
    assert kept.json()["outcomes"] == ["created", "kept_existing"]
    won = client.post(f"{base}/facts", json={**batch, "conflict_policy": "latest_recorded_wins"})
    assert won.status_code == 201, won.text
    assert won.json()["outcomes"][1] == "created"
    now = _facts(client, tenant, subject="mira", predicate="city")
    assert [(f["value"], f["source_episode_id"]) for f in now] == [("Paris", "e2")]


# -- atomicity -------------------------------------------------------------------------
def test_batch_with_one_invalid_item_writes_nothing(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    batch = {
        "facts": [
            fact("ann", "city", value="Lyon"),
            fact("bob", "city", value="Nice", valid_from="2026-06-01T09:00:00"),  # naive
            fact("cid", "city", value="Pau"),
        ]
    }
    body = problem(client.post(f"{base}/facts", json=batch), 422)
    assert body["errors"] == [
        {
            "index": 1,
            "field": "valid_from",
            "location": "body",
            "reason": "Input should have timezone info",
        }
    ]
    assert _facts(client, tenant, predicate="city") == []
    problem(client.get(f"{base}/entities/ann"), 404)  # not even the entity


def test_batch_failing_in_the_ledger_writes_nothing(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    batch = {
        "facts": [
            fact("ann", "city", value="Lyon"),
            fact("bob", "city", value="Nice", object="x"),  # both value and object
            fact("cid", "city", value="Pau", source_episode_id="e-missing"),
        ]
    }
    body = problem(client.post(f"{base}/facts", json=batch), 422)
    where = {(e["index"], e["field"]) for e in body["errors"]}
    assert where == {(1, "value"), (2, "source_episode_id")}
    assert _facts(client, tenant, predicate="city") == []


def test_inline_episode_facts_failing_store_nothing(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    bad = episode("e1", facts=[{"subject": "mira", "predicate": "city"}])  # no value/object
    body = problem(client.post(f"{base}/episodes", json=bad), 422)
    assert body["errors"][0]["index"] == 0
    problem(client.get(f"{base}/episodes/e1"), 404)
    # The same id can then be stored properly.
    good = episode("e1", facts=[{"subject": "mira", "predicate": "city", "value": "Lyon"}])
    assert client.post(f"{base}/episodes", json=good).status_code == 201


def test_extract_without_extractor_is_422_naming_extract(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    for mode in ("sync", "background"):
        body = problem(client.post(f"{base}/episodes", json=episode("e1", extract=mode)), 422)
        assert body["errors"][0]["field"] == "extract"
        assert "extract" in body["detail"]
    problem(client.get(f"{base}/episodes/e1"), 404)
    ok = client.post(f"{base}/episodes", json=episode("e1", extract="none"))
    assert ok.status_code == 201


# -- bad input -------------------------------------------------------------------------
def test_naive_timestamps_are_422(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    ep = problem(client.post(f"{base}/episodes", json=episode("e1", "2026-06-01T09:00:00")), 422)
    assert ep["errors"][0]["field"] == "occurred_at"
    q = problem(client.get(f"{base}/facts", params={"as_of": "2026-06-01T09:00:00"}), 422)
    assert q["errors"][0] == {
        "field": "as_of",
        "location": "query",
        "reason": "Input should have timezone info",
    }
    problem(
        client.get(
            f"{base}/facts/history",
            params={"subject": "s", "predicate": "p", "known_at": "2026-06-01T09:00:00"},
        ),
        422,
    )
    client.post(f"{base}/episodes", json=episode("e1"))
    w = client.post(f"{base}/facts", json={"facts": [fact("a", "b", value=1)]})
    fid = w.json()["facts"][0]["fact_id"]
    r = problem(
        client.post(f"{base}/facts/{fid}/retract", json={"valid_to": "2026-07-01T00:00"}), 422
    )
    assert r["errors"][0]["field"] == "valid_to"
    assert _facts(client, tenant, subject="a")[0]["valid_to"] is None


def test_out_of_range_timestamps_are_422(client: TestClient, tenant: str) -> None:
    """Aware but with no UTC form (year 10000 or 0 once converted): refused, not a 500."""
    base = _base(tenant)
    late, early = "9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00"
    for t in (late, early):
        q = problem(client.get(f"{base}/facts", params={"as_of": t}), 422)
        assert q["errors"][0]["field"] == "as_of"
        assert q["errors"][0]["reason"].startswith("timestamp out of range")
        ep = problem(client.post(f"{base}/episodes", json=episode("e-far", t)), 422)
        assert ep["errors"][0]["field"] == "occurred_at"
    problem(client.get(f"{base}/episodes/e-far"), 404)
    client.post(f"{base}/episodes", json=episode("e1"))
    batch = {"facts": [fact("a", "p", value=1), fact("b", "p", value=2, valid_to=late)]}
    body = problem(client.post(f"{base}/facts", json=batch), 422)
    assert [(e["index"], e["field"]) for e in body["errors"]] == [(1, "valid_to")]
    assert _facts(client, tenant) == []
    w = client.post(f"{base}/facts", json={"facts": [fact("a", "p", value=1)]})
    fid = w.json()["facts"][0]["fact_id"]
    problem(client.post(f"{base}/facts/{fid}/retract", json={"valid_to": late}), 422)
    assert _facts(client, tenant)[0]["valid_to"] is None


def test_literal_values_are_bounded(client: TestClient, tenant: str) -> None:
    """A value no index can key (Neo4j: ~8 KB) is a 422 on both stores, never a 500."""
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    fits = "é" * 300 + "x" * 244  # 2048 characters as escaped JSON: 300 * 6 + 244 + 2 quotes
    ok = client.post(f"{base}/facts", json={"facts": [fact("a", "note", value=fits)]})
    assert ok.status_code == 201, ok.text
    assert ok.json()["facts"][0]["value"] == fits
    batch = {"facts": [fact("b", "note", value="x"), fact("c", "note", value=fits + "é")]}
    body = problem(client.post(f"{base}/facts", json=batch), 422)
    assert [(e["index"], e["field"]) for e in body["errors"]] == [(1, "value")]
    inline = episode("e2", facts=[{"subject": "d", "predicate": "note", "value": "v" * 10_000}])
    problem(client.post(f"{base}/episodes", json=inline), 422)
    problem(client.get(f"{base}/episodes/e2"), 404)
    assert [f["subject"] for f in _facts(client, tenant, predicate="note")] == ["a"]


@pytest.mark.parametrize(
    "raw",
    [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"12345678901234567890", b'"x\\ud800"'],
)
def test_json_the_stores_cannot_hold_is_400(client: TestClient, tenant: str, raw: bytes) -> None:
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    body = (
        b'{"facts": [{"subject": "a", "predicate": "p", "value": %s, "source_episode_id": "e1"}]}'
    )
    r = client.post(
        f"{base}/facts", content=body % raw, headers={"content-type": "application/json"}
    )
    assert "not portable JSON" in problem(r, 400)["detail"]
    ep = b'{"episode_id": "e2", "content": {"x": %s}, "occurred_at": "2026-06-01T09:00:00Z"}'
    problem(
        client.post(
            f"{base}/episodes", content=ep % raw, headers={"content-type": "application/json"}
        ),
        400,
    )
    problem(client.get(f"{base}/episodes/e2"), 404)
    assert _facts(client, tenant) == []
    # A surrogate pair (an emoji) is text, and a large double is a number.
    ok = client.post(
        f"{base}/facts",
        content=body % b'"\\ud83d\\ude00 1.5e300"',
        headers={"content-type": "application/json"},
    )
    assert ok.status_code == 201, ok.text
    assert ok.json()["facts"][0]["value"] == "\U0001f600 1.5e300"


def test_malformed_and_mistyped_bodies(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    bad_json = client.post(
        f"{base}/facts", content=b'{"facts": [', headers={"content-type": "application/json"}
    )
    assert "JSON" in problem(bad_json, 400)["detail"]
    problem(client.post(f"{base}/facts", json={"facts": "nope"}), 422)
    problem(client.post(f"{base}/facts", json={"facts": []}), 422)
    problem(client.post(f"{base}/facts", json={"facts": [{}], "extra": 1}), 422)
    problem(client.post(f"{base}/facts", json=[1, 2]), 422)
    problem(
        client.post(f"{base}/facts", content=b"plain", headers={"content-type": "text/plain"}), 422
    )
    problem(client.post(f"{base}/episodes", json={"content": "x"}), 422)
    problem(client.put(f"{base}/schema", json={"mode": "loose"}), 422)
    problem(client.get(f"{base}/facts/history"), 422)
    problem(client.get(f"{base}/entities/x/neighbors", params={"direction": "up"}), 422)
    assert _facts(client, tenant) == []


def test_unknown_routes_and_methods(client: TestClient, tenant: str) -> None:
    problem(client.get("/nope"), 404)
    problem(client.get(f"{_base(tenant)}/nope"), 404)
    r = problem(client.patch(f"{_base(tenant)}/facts"), 405)
    assert client.patch(f"{_base(tenant)}/facts").headers["allow"]
    assert r["instance"] == f"{_base(tenant)}/facts"
    problem(client.get(f"{_base(tenant)}/episodes/nope"), 404)
    problem(client.delete(f"{_base(tenant)}/episodes/nope"), 404)


# -- 413 -------------------------------------------------------------------------------
def test_body_over_limit_is_413(make_app: AppFactory, tenant: str) -> None:
    app = make_app(max_body_bytes=2048)
    base = _base(tenant)
    with TestClient(app) as client:
        client.post(f"{base}/episodes", json=episode("e1"))
        many = {"facts": [fact(f"s{i}", "city", value="Lyon") for i in range(40)]}
        body = problem(client.post(f"{base}/facts", json=many), 413)
        assert body["limit"] == 2048

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams
            yield b'{"facts": ['
            for i in range(40):
                yield (b"," if i else b"") + (
                    b'{"subject": "s%d", "predicate": "city", "value": "Lyon", '
                    b'"valid_from": "2026-06-01T09:00:00Z", "source_episode_id": "e1"}' % i
                )
            yield b"]}"

        streamed = client.post(
            f"{base}/facts", content=chunks(), headers={"content-type": "application/json"}
        )
        problem(streamed, 413)
        assert client.get(f"{base}/facts").json()["facts"] == []
        small = client.post(f"{base}/facts", json={"facts": many["facts"][:2]})
        assert small.status_code == 201


# -- 503 -------------------------------------------------------------------------------
class BrokenStore:
    """The test's store, until ``down`` is set: then every call fails as a dead store does."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner
        self.down = False

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.down:
                raise StoreUnavailableError("connection refused", retry_after=7)
            return attr(*args, **kwargs)

        return call


def test_store_down_is_503_with_retry_after(store: Store, tenant: str) -> None:
    broken = BrokenStore(store)
    app = create_app(Settings(), store=broken)  # type: ignore[arg-type]
    base = _base(tenant)
    with TestClient(app) as client:
        assert client.get("/readyz").status_code == 200
        client.post(f"{base}/episodes", json=episode("e1"))
        broken.down = True
        for r in (
            client.get("/readyz"),
            client.get(f"{base}/facts"),
            client.post(f"{base}/facts", json={"facts": [fact("a", "b", value=1)]}),
            client.post(f"{base}/episodes", json=episode("e2")),
            client.get(f"{base}/episodes/e1"),
        ):
            problem(r, 503)
            assert r.headers["retry-after"] == "7"
        assert client.get("/healthz").status_code == 200  # the process is still up
        metrics = client.get("/metrics").text
        assert 'sgam_store_errors_total{kind="StoreUnavailableError"} 5.0' in metrics
        broken.down = False
        assert client.get("/readyz").status_code == 200
        assert client.get(f"{base}/facts").json()["facts"] == []


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_unopenable_sqlite_is_503(store: Store, tmp_path: Path, tenant: str) -> None:
    """A real breakage: the database path is a directory SQLite cannot open."""
    dead = SqliteStore(tmp_path)
    app = create_app(Settings(retry_after_seconds=3), store=dead)
    with TestClient(app) as client:
        r = client.get("/readyz")
        problem(r, 503)
        assert int(r.headers["retry-after"]) >= 1
        problem(client.get(f"{_base(tenant)}/facts"), 503)
