"""Idempotency, conflicts, atomicity and every error answer (problem+json, nothing written)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.server import running
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
    # Same content and facts again: 200, the stored episode, no writes.
    again = client.post(f"{base}/episodes", json=body)
    assert again.status_code == 200, again.text
    a = again.json()
    assert a["created"] is False
    assert a["recorded_at"] == first.json()["recorded_at"]
    assert [f["fact_id"] for f in a["facts"]] == [first.json()["facts"][0]["fact_id"]]
    assert [f["value"] for f in _facts(client, tenant, subject="mira")] == ["Lyon"]
    # Other facts in a redelivery are not dropped silently: this one clashes (409).
    other = {**body, "facts": [{"subject": "mira", "predicate": "city", "value": "Paris"}]}
    clash = problem(client.post(f"{base}/episodes", json=other), 409)
    assert clash["conflicting_fact_id"] == first.json()["facts"][0]["fact_id"]
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


NUMBER_SCHEMA = {
    "predicates": [{"name": "amount", "value_type": "number"}],
}


@pytest.mark.parametrize(
    "raw",
    ["1e400", "-1e400", "nan", "NaN", "-inf", "inf", "Infinity", "9223372036854775808", "1_000"],
)
def test_numbers_no_store_can_hold_are_422(client: TestClient, tenant: str, raw: str) -> None:
    """Review M1: these strings for a number predicate were a 500 (SQLite); now a 422
    naming the item and the field, and nothing written."""
    base = _base(tenant)
    assert client.put(f"{base}/schema", json=NUMBER_SCHEMA).status_code == 200
    client.post(f"{base}/episodes", json=episode("e1"))
    batch = {"facts": [fact("a", "amount", value=1), fact("b", "amount", value=raw)]}
    body = problem(client.post(f"{base}/facts", json=batch), 422)
    assert [(e["index"], e["field"]) for e in body["errors"]] == [(1, "value")]
    assert _facts(client, tenant, predicate="amount") == []


def test_large_numbers_are_held_alike_on_both_stores(client: TestClient, tenant: str) -> None:
    """Review M1: "1e20" became an integer past 64 bits, which Neo4j cannot pack (500).
    A number written with a fraction or an exponent is a double; an integer literal is
    an integer when it fits 64 bits."""
    base = _base(tenant)
    assert client.put(f"{base}/schema", json=NUMBER_SCHEMA).status_code == 200
    client.post(f"{base}/episodes", json=episode("e1"))
    cases = {
        "s1": "1e20",
        "s2": "-1.5e300",
        "s3": "9223372036854775807",
        "s4": "-9223372036854775808",
        "s5": 1e20,
        "s6": "12",
        "s7": "2.50",
    }
    batch = {"facts": [fact(s, "amount", value=v) for s, v in cases.items()]}
    w = client.post(f"{base}/facts", json=batch)
    assert w.status_code == 201, w.text
    expected = {
        "s1": 1e20,
        "s2": -1.5e300,
        "s3": 2**63 - 1,
        "s4": -(2**63),
        "s5": 1e20,
        "s6": 12,
        "s7": 2.5,
    }
    assert {f["subject"]: f["value"] for f in w.json()["facts"]} == expected
    read = {f["subject"]: f["value"] for f in _facts(client, tenant, predicate="amount")}
    assert read == expected
    assert isinstance(read["s3"], int)
    assert isinstance(read["s1"], float)


def _nested(depth: int) -> dict[str, Any]:
    """An object ``depth`` levels deep: {"k": {"k": ... {} ...}}."""
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


def _nested_text(depth: int) -> bytes:
    return b'{"k": ' * (depth - 1) + b"{}" + b"}" * (depth - 1)


@pytest.mark.parametrize("depth", [33, 300, 5000])
@pytest.mark.parametrize("field", ["metadata", "content"])
def test_json_nested_beyond_the_limit_is_422_and_stores_nothing(
    client: TestClient, tenant: str, field: str, depth: int
) -> None:
    """Review H3: metadata nested 260-950 deep was stored and then broke every read of
    it (500); deeper still was a RecursionError. The limit is 32 levels, checked
    without recursion, before anything is stored."""
    base = _base(tenant)
    head = b'{"episode_id": "e1", "kind": "event", "occurred_at": "2026-06-01T09:00:00Z", '
    other = b'"content": "x"' if field == "metadata" else b'"metadata": {}'
    raw = head + other + b', "%s": ' % field.encode() + _nested_text(depth) + b"}"
    r = client.post(f"{base}/episodes", content=raw, headers={"content-type": "application/json"})
    body = problem(r, 422)
    (item,) = body["errors"]
    assert item["field"] == field
    assert "32" in item["reason"]
    assert "32" in body["detail"]
    problem(client.get(f"{base}/episodes/e1"), 404)


@pytest.mark.parametrize("opening", [b"[", b'{"k": '])
def test_json_opened_deep_and_never_closed_is_refused_not_a_500(
    client: TestClient, tenant: str, opening: bytes
) -> None:
    """Malformed as well as too deep: the parser recursed once per level before finding
    it malformed, past Python's stack (a 500). Measured without parsing, it is a 422."""
    raw = b'{"facts": [{"subject": "a", "predicate": "p", "value": ' + opening * 5000
    r = client.post(
        f"{_base(tenant)}/facts", content=raw, headers={"content-type": "application/json"}
    )
    body = problem(r, 422)
    (item,) = body["errors"]
    assert item["field"] == "facts"
    assert "32" in item["reason"]


def test_json_nested_to_the_limit_is_stored_and_read_back(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    deepest = _nested(32)
    ep = episode("e1", kind="event", content=deepest, metadata=deepest)
    r = client.post(f"{base}/episodes", json=ep)
    assert r.status_code == 201, r.text
    got = client.get(f"{base}/episodes/e1")
    assert got.status_code == 200, got.text
    assert got.json()["metadata"] == deepest
    assert got.json()["content"] == deepest
    s = client.post(f"{base}/search", json={"query": "content", "scopes": ["episodes"]})
    assert s.status_code == 200, s.text


def test_deep_event_mapping_in_a_schema_is_422(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    schema = {"event_mappings": [_nested(40)]}
    body = problem(client.put(f"{base}/schema", json=schema), 422)
    assert body["errors"][0]["field"].startswith("event_mappings")
    assert "32" in body["errors"][0]["reason"]
    assert client.get(f"{base}/schema").json()["version"] == 0


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
        assert r.headers["retry-after"] == "3"  # SGAM_RETRY_AFTER_SECONDS drives it
        facts = client.get(f"{_base(tenant)}/facts")
        problem(facts, 503)
        assert facts.headers["retry-after"] == "3"


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_a_permanent_sqlite_failure_is_500_without_retry_after(
    store: Store, tmp_path: Path, tenant: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Review L4: a table that is gone is not a reason to retry: 500 ``store-failed``,
    logged with the request, no Retry-After."""
    broken = SqliteStore(tmp_path / "gone.db")
    broken.init()
    broken.conn.executescript("DROP TABLE facts;")
    app = create_app(Settings(retry_after_seconds=3), store=broken)
    with TestClient(app) as client, caplog.at_level("ERROR", logger="sgam.api"):
        r = client.get(f"{_base(tenant)}/facts")
        body = problem(r, 500)
        assert body["type"] == "urn:sgam:problem:store-failed"
        assert "no such table" in body["detail"]
        assert "retry-after" not in r.headers
        assert client.post(f"{_base(tenant)}/episodes", json=episode("e1")).status_code == 201
        w = client.post(f"{_base(tenant)}/facts", json={"facts": [fact("a", "b", value=1)]})
        problem(w, 500)
        assert "retry-after" not in w.headers
        metrics = client.get("/metrics").text
        assert 'sgam_store_errors_total{kind="StoreFailedError"} 2.0' in metrics
    logged = [m for m in caplog.messages if "store failed on GET" in m]
    assert logged
    assert f"/v1/tenants/{tenant}/facts" in logged[0]
    broken.close()


def test_sqlite_errors_are_classified_by_their_code(tmp_path: Path) -> None:
    """Busy/locked (real errors from a real lock) → 503; the rest → a permanent failure."""
    import sqlite3

    from graph.errors import StoreFailedError
    from graph.stores.sqlite.connection import translated

    path = tmp_path / "l.db"
    holder = sqlite3.connect(path, isolation_level=None, timeout=0)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    waiter = sqlite3.connect(path, isolation_level=None, timeout=0)
    with pytest.raises(sqlite3.OperationalError) as locked:
        waiter.execute("BEGIN EXCLUSIVE")
    with pytest.raises(sqlite3.OperationalError) as missing:
        holder.execute("SELECT * FROM nowhere")
    holder.execute("ROLLBACK")
    holder.close()
    waiter.close()
    busy = translated(locked.value, what="begin")
    assert type(busy) is StoreUnavailableError
    assert busy.retry_after is None
    assert type(translated(missing.value, what="read")) is StoreFailedError


# -- ids -------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [".", ".."])
def test_dot_ids_are_refused(client: TestClient, tenant: str, bad: str) -> None:
    """Review L2: "." and ".." were stored, but no HTTP client can name them in a path
    (dot segments are removed), so they could never be fetched or deleted."""
    base = _base(tenant)
    problem(client.post(f"{base}/episodes", json=episode(bad)), 422)
    client.post(f"{base}/episodes", json=episode("e1"))
    for item in (
        fact(bad, "city", value="Lyon"),
        fact("mira", "knows", object=bad),
        fact("mira", "city", value="Lyon", source_episode_id=bad),
    ):
        body = problem(client.post(f"{base}/facts", json={"facts": [item]}), 422)
        assert "'.' and '..'" in body["detail"]
    assert _facts(client, tenant) == []


TRICKY_IDS = ["...", ".a", "a.", "%", "%2F", "a%2Fb", "%00", "%2e", "%2E%2E", "a?b", "a#b",
              " a ", "a\\b", "ü", "a;b", "+", "\u2028", "\ufeff"]  # fmt: skip


def test_every_accepted_id_is_fetched_back_through_its_url(store: Store, tenant: str) -> None:
    """Over real HTTP: an id the API accepts can be read back and deleted by its URL."""
    settings = Settings(port=0, log_level="warning")
    with running(settings, store=store) as url, httpx.Client(base_url=url) as http:
        base = f"/v1/tenants/{tenant}"
        for i, ident in enumerate(TRICKY_IDS):
            r = http.post(f"{base}/episodes", json=episode(ident))
            assert r.status_code == 201, (ident, r.text)
            item = fact(ident, "n", value=i, source_episode_id=ident)
            w = http.post(f"{base}/facts", json={"facts": [item]})
            assert w.status_code == 201, (ident, w.text)
        for ident in TRICKY_IDS:
            path = quote(ident, safe="")
            got = http.get(f"{base}/episodes/{path}")
            assert got.status_code == 200, (ident, got.text)
            assert got.json()["episode_id"] == ident
            ent = http.get(f"{base}/entities/{path}")
            assert ent.status_code == 200, (ident, ent.text)
            assert ent.json()["entity_id"] == ident
            assert http.delete(f"{base}/episodes/{path}").status_code == 200, ident
