"""Schemathesis against the app's own OpenAPI schema, in-process (ASGI), on both stores.

Every operation gets a bounded number of generated requests; none may answer 5xx, and
every answer must match the schema documented for its status and media type.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from api.app import create_app
from api.settings import Settings
from graph.embeddings import default_embedder
from graph.port import Store

MAX_EXAMPLES = 25
CHECKS = [
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
    content_type_conformance,
]


SEED_EPISODE = "seed-ep"
SEED_SUBJECT = "seed-subj"


def _seed(app: Any, tenant: str) -> str:
    """An episode, an entity and a fact, so pinned cases reach past the 404s."""
    with TestClient(app) as client:
        base = f"/v1/tenants/{tenant}"
        r = client.post(
            f"{base}/episodes",
            json={
                "episode_id": SEED_EPISODE,
                "content": "seed",
                "occurred_at": "2026-01-01T00:00:00Z",
            },
        )
        assert r.status_code == 201, r.text
        r = client.post(
            f"{base}/facts",
            json={
                "facts": [
                    {
                        "subject": SEED_SUBJECT,
                        "predicate": "knows",
                        "object": "seed-friend",
                        "source_episode_id": SEED_EPISODE,
                    }
                ]
            },
        )
        assert r.status_code == 201, r.text
        fact_id: str = r.json()["facts"][0]["fact_id"]
        return fact_id


def _pin(case: Any, tenant: str, fact_id: str) -> None:
    """Point a generated case at the seeded data of this test's tenant."""
    params = case.path_parameters
    params["tenant"] = tenant
    if "entity_id" in params:
        params["entity_id"] = SEED_SUBJECT
    if "fact_id" in params:
        params["fact_id"] = fact_id
    if "episode_id" in params and case.method.upper() == "GET":
        params["episode_id"] = SEED_EPISODE
    body = case.body
    if isinstance(body, dict) and isinstance(body.get("facts"), list):
        for item in body["facts"]:
            if isinstance(item, dict):
                item["source_episode_id"] = SEED_EPISODE


def _fuzz(
    operation: Any, *, tenant: str, fact_id: str, tenants: set[str], statuses: dict[str, set[int]]
) -> None:
    """Run one operation's generated cases; record the tenants used and the statuses."""

    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(), pinned=st.booleans())
    def check(case: Any, pinned: bool) -> None:
        params = case.path_parameters or {}
        if "tenant" in params:
            # Half the cases on this test's seeded tenant. Writes never go to a generated
            # tenant id (it could be another test's on a shared Neo4j): they go to a
            # tenant of this test's own; reads keep the generated ids.
            if pinned:
                _pin(case, tenant, fact_id)
            elif case.method.upper() != "GET":
                params["tenant"] = f"{tenant}-fuzz"
            tenants.add(params["tenant"])
        response = case.call_and_validate(checks=CHECKS)
        statuses.setdefault(f"{case.method} {operation.path}", set()).add(response.status_code)

    check()


def test_openapi_fuzz(store: Store, tenant: str) -> None:
    # Load the embedding model first: on a busy machine loading it takes longer than
    # schemathesis' 10 s read timeout, which the first /search request would then hit.
    default_embedder().encode(["warm up"])
    app = create_app(Settings(), store=store)
    fact_id = _seed(app, tenant)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 14
    tenants: set[str] = set()
    statuses: dict[str, set[int]] = {}
    try:
        for operation in operations:
            _fuzz(operation, tenant=tenant, fact_id=fact_id, tenants=tenants, statuses=statuses)
    finally:
        store.purge_tenant(tenant_id=f"{tenant}-fuzz")  # ``tenant`` is purged by its fixture
    assert {tenant, f"{tenant}-fuzz"} <= tenants
    assert len(tenants) > 2  # generated tenant ids too
    # The fuzzing reached real answers, not only refusals.
    ok = {op for op, codes in statuses.items() if codes & {200, 201}}
    assert len(ok) >= 12, sorted(statuses.items())


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_schema_documents_problems(store: Store) -> None:
    spec = create_app(Settings(), store=store).openapi()
    for path, item in spec["paths"].items():
        for method, op in item.items():
            for status, response in op["responses"].items():
                if status.startswith(("4", "5")):
                    assert list(response["content"]) == ["application/problem+json"], (
                        path,
                        method,
                        status,
                    )
    assert "HTTPValidationError" not in spec["components"]["schemas"]
