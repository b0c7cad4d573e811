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
from tests.api.helpers import episode, problem


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
