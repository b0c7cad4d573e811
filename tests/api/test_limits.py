"""Documented input and answer limits, through REST on both stores: schema size, the work
a schema costs, and lists that page instead of stopping silently."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

import api.routes.schema as schema_route
from graph.model import EpisodeCreate, MemoryDelta
from graph.port import Store
from graph.schema import MAX_ENTITY_TYPES, MAX_PREDICATES, MemorySchema
from graph.service import MemoryService
from tests.api.helpers import episode, fact, problem


def _base(tenant: str) -> str:
    return f"/v1/tenants/{tenant}"


def _predicates(n: int) -> list[dict[str, Any]]:
    return [{"name": f"p{i}", "value_type": "string"} for i in range(n)]


# -- schema size -----------------------------------------------------------------------
@pytest.mark.parametrize("count", [MAX_PREDICATES + 1, 26_000])
def test_schema_over_the_predicate_limit_is_422_naming_it(
    client: TestClient, tenant: str, count: int
) -> None:
    """Review H2: 26k predicates were accepted after 4.4 s of a quadratic check on the
    event loop; now a 422 naming the limit, and nothing stored."""
    base = _base(tenant)
    raw = json.dumps({"predicates": _predicates(count)}, separators=(",", ":"))
    assert len(raw) < 1024 * 1024  # under the body limit: this is the schema's own limit
    r = client.put(f"{base}/schema", content=raw, headers={"content-type": "application/json"})
    body = problem(r, 422)
    (item,) = body["errors"]
    assert item["field"] == "predicates"
    assert f"at most {MAX_PREDICATES} predicates" in item["reason"]
    assert client.get(f"{base}/schema").json()["version"] == 0


def test_schema_at_the_limits_is_stored(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    schema = {
        "mode": "strict",
        "entity_types": [{"name": f"T{i}"} for i in range(MAX_ENTITY_TYPES)],
        "predicates": _predicates(MAX_PREDICATES),
    }
    r = client.put(f"{base}/schema", json=schema)
    assert r.status_code == 200, r.text
    assert r.json()["version"] == 1
    assert len(client.get(f"{base}/schema").json()["predicates"]) == MAX_PREDICATES
    too_many = {**schema, "entity_types": [{"name": f"T{i}"} for i in range(501)]}
    body = problem(client.put(f"{base}/schema", json=too_many), 422)
    assert body["errors"][0]["field"] == "entity_types"
    assert f"at most {MAX_ENTITY_TYPES} entity types" in body["errors"][0]["reason"]


def test_duplicate_names_are_still_refused(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    dup = {"predicates": [*_predicates(MAX_PREDICATES - 1), {"name": "p7", "value_type": "date"}]}
    body = problem(client.put(f"{base}/schema", json=dup), 422)
    assert "duplicate predicate names: ['p7']" in body["detail"]
    problem(
        client.put(f"{base}/schema", content=b"{", headers={"content-type": "application/json"}),
        400,
    )
    problem(
        client.put(f"{base}/schema", content=b"", headers={"content-type": "application/json"}), 422
    )
    problem(client.put(f"{base}/schema", json=[1]), 422)
    assert client.get(f"{base}/schema").json()["version"] == 0


def test_schema_validation_runs_off_the_event_loop(
    client: TestClient, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schema's parsing and validation (linear, but up to 1 MiB of it) run in the
    threadpool, not in the thread of the event loop that serves every tenant."""
    seen: list[bool] = []
    real = schema_route.parse_schema

    def spy(body: bytes) -> MemorySchema:
        try:
            asyncio.get_running_loop()
            seen.append(True)
        except RuntimeError:
            seen.append(False)
        return real(body)

    monkeypatch.setattr(schema_route, "parse_schema", spy)
    r = client.put(f"{_base(tenant)}/schema", json={"predicates": _predicates(10)})
    assert r.status_code == 200, r.text
    assert seen == [False]


def test_a_stored_schema_is_parsed_once_per_version(store: Store, tenant: str) -> None:
    """Review H2: every write re-validated the stored schema (5.4 s per write for a large
    one). A version is parsed once; a new version is parsed anew."""
    service = MemoryService(store)
    big = MemorySchema.model_validate({"predicates": _predicates(MAX_PREDICATES)})
    service.put_schema(tenant_id=tenant, schema=big)
    first = service.schema(tenant_id=tenant)
    assert service.schema(tenant_id=tenant) is first
    assert first.version == 1
    pred = first.predicate("p999")
    assert pred is not None
    assert pred.name == "p999"
    service.add_episode(tenant_id=tenant, body=EpisodeCreate.model_validate(episode("e1")))
    w = service.write_facts(
        tenant_id=tenant,
        deltas=[MemoryDelta(subject="a", predicate="p3", value="x", source_episode_id="e1")],
    )
    assert w.facts[0].schema_version == 1
    service.put_schema(tenant_id=tenant, schema=big.model_copy(update={"predicates": []}))
    second = service.schema(tenant_id=tenant)
    assert second is not first
    assert (second.version, second.predicate("p999")) == (2, None)


# -- lists: cursors, never a silent cut ------------------------------------------------
def _pages(client: TestClient, url: str, key: str, **params: Any) -> list[list[dict[str, Any]]]:
    """Every page of a list, following next_cursor; the filters stay the same."""
    pages: list[list[dict[str, Any]]] = []
    cursor: str | None = None
    while True:
        r = client.get(url, params={**params, **({"cursor": cursor} if cursor else {})})
        assert r.status_code == 200, r.text
        pages.append(r.json()[key])
        cursor = r.json()["next_cursor"]
        if cursor is None:
            return pages
        assert len(pages) < 100, "cursor does not advance"


def test_entity_and_episode_fact_lists_page_past_a_thousand(
    client: TestClient, tenant: str
) -> None:
    """Review L3: an entity's and an episode's fact lists stopped silently at 1,000."""
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    n = 1001
    items = [fact("hub", f"p{i}", value=i) for i in range(n)]
    for chunk in (items[:1000], items[1000:]):
        assert client.post(f"{base}/facts", json={"facts": chunk}).status_code == 201
    ent = client.get(f"{base}/entities/hub")
    assert ent.status_code == 200, ent.text
    first = ent.json()
    assert len(first["facts"]) == 1000
    assert first["next_cursor"] is not None
    rest = client.get(f"{base}/entities/hub", params={"cursor": first["next_cursor"]}).json()
    assert rest["next_cursor"] is None
    seen = [f["predicate"] for f in first["facts"] + rest["facts"]]
    assert sorted(seen) == sorted(f"p{i}" for i in range(n))

    ep = client.get(f"{base}/episodes/e1").json()
    assert len(ep["facts"]) == 1000
    more = client.get(f"{base}/episodes/e1", params={"cursor": ep["next_cursor"]}).json()
    assert (len(more["facts"]), more["next_cursor"]) == (1, None)
    assert {f["predicate"] for f in ep["facts"] + more["facts"]} == {f"p{i}" for i in range(n)}
    # The idempotent redelivery of the episode answers the same first page and cursor.
    again = client.post(f"{base}/episodes", json=episode("e1"))
    assert again.status_code == 200
    assert len(again.json()["facts"]) == 1000
    assert again.json()["next_cursor"] is not None


def test_entity_facts_page_through_both_directions(client: TestClient, tenant: str) -> None:
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    out = [fact("ann", f"knows_{i}", object=f"x{i}") for i in range(4)]
    inc = [fact(f"y{i}", "knows", object="ann") for i in range(5)]
    loop = [fact("ann", "likes", object="ann")]
    assert client.post(f"{base}/facts", json={"facts": out + inc + loop}).status_code == 201
    for limit in (1, 2, 3, 5, 10, 1000):
        pages = _pages(client, f"{base}/entities/ann", "facts", limit=limit)
        ids = [f["fact_id"] for page in pages for f in page]
        assert len(ids) == len(set(ids)) == 10, limit
        assert all(len(page) <= limit for page in pages)
    r = client.get(f"{base}/entities/ann", params={"limit": 2})
    cursor = r.json()["next_cursor"]
    problem(client.get(f"{base}/entities/bob", params={"cursor": cursor}), 422)
    problem(client.get(f"{base}/entities/ann", params={"cursor": "garbage"}), 422)
    problem(client.get(f"{base}/entities/ann", params={"limit": 1001}), 422)


def test_history_pages_in_valid_time_order(client: TestClient, tenant: str) -> None:
    """Review L3: a timeline's history was unbounded."""
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    days = [f"2026-01-{d:02d}T00:00:00Z" for d in range(1, 12)]
    batch = [fact("mira", "city", value=f"c{i}", valid_from=d) for i, d in enumerate(days)]
    assert client.post(f"{base}/facts", json={"facts": batch}).status_code == 201
    whole = client.get(f"{base}/facts/history", params={"subject": "mira", "predicate": "city"})
    assert whole.json()["next_cursor"] is None
    assert [f["valid_from"] for f in whole.json()["facts"]] == days
    for limit in (1, 4, 11):
        pages = _pages(
            client, f"{base}/facts/history", "facts", subject="mira", predicate="city", limit=limit
        )
        assert [f["valid_from"] for page in pages for f in page] == days
        assert all(len(page) <= limit for page in pages)
    r = client.get(
        f"{base}/facts/history", params={"subject": "mira", "predicate": "city", "limit": 4}
    )
    cursor = r.json()["next_cursor"]
    problem(
        client.get(
            f"{base}/facts/history",
            params={"subject": "ann", "predicate": "city", "cursor": cursor},
        ),
        422,
    )


def test_neighbourhood_over_its_limit_is_422_naming_it(client: TestClient, tenant: str) -> None:
    """Review L3: neighbors answered the whole reachable subgraph, however large."""
    base = _base(tenant)
    client.post(f"{base}/episodes", json=episode("e1"))
    spokes = [fact("hub", "knows", object=f"s{i}") for i in range(6)]
    far = [fact("s0", "knows", object=f"t{i}") for i in range(3)]
    assert client.post(f"{base}/facts", json={"facts": spokes + far}).status_code == 201
    ok = client.get(f"{base}/entities/hub/neighbors", params={"depth": 2, "limit": 9})
    assert ok.status_code == 200, ok.text
    assert len(ok.json()["facts"]) == 9
    body = problem(
        client.get(f"{base}/entities/hub/neighbors", params={"depth": 2, "limit": 8}), 422
    )
    assert body["errors"][0]["field"] == "limit"
    assert "more than 8 facts" in body["errors"][0]["reason"]
    one = client.get(f"{base}/entities/hub/neighbors", params={"depth": 1, "limit": 6})
    assert len(one.json()["facts"]) == 6
    problem(client.get(f"{base}/entities/hub/neighbors", params={"limit": 1001}), 422)
    default = client.get(f"{base}/entities/hub/neighbors", params={"depth": 4})
    assert len(default.json()["facts"]) == 9


def test_an_episode_carries_at_most_a_thousand_facts(client: TestClient, tenant: str) -> None:
    """As many as one POST /facts batch: one transaction's worth. Past it the episode is
    refused whole; it was written, however many the body held."""
    base = _base(tenant)
    items = [
        {k: v for k, v in fact("hub", f"p{i}", value=i).items() if k != "source_episode_id"}
        for i in range(1001)
    ]
    body = problem(client.post(f"{base}/episodes", json=episode("big", facts=items)), 422)
    assert [(e["field"], e["location"]) for e in body["errors"]] == [("facts", "body")]
    assert "1000" in body["errors"][0]["reason"]
    problem(client.get(f"{base}/episodes/big"), 404)
    ok = client.post(f"{base}/episodes", json=episode("big", facts=items[:1000]))
    assert ok.status_code == 201, ok.text
    assert len(ok.json()["facts"]) == 1000
