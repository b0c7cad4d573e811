"""Extraction over HTTP: retry, pending candidates, merge candidates (both stores).

The candidates are produced by the real pipeline against a loopback chat-completions
server; the routes are then exercised through the app like any client would.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.routes.extraction import router as extraction_router
from extraction import LlmExtractor, on_episode_created
from extraction.loopback import LoopbackLLM, answer, completion
from graph.model import EpisodeCreate, ExtractMode, MemoryDelta
from graph.schema import MemorySchema, PredicateSpec
from graph.service import MemoryService
from tests.api.conftest import AppFactory
from tests.api.helpers import problem
from tests.integration.test_extraction_pipeline import T0, fact, settings


def with_extraction(app: FastAPI) -> FastAPI:
    """The app with the extraction router (once the lead adds it to routers(), as is)."""
    if "/v1/tenants/{tenant}/candidates" not in app.openapi()["paths"]:
        app.include_router(extraction_router)
        app.openapi_schema = None  # documented again with the router's paths
    return app


@pytest.fixture
def api(make_app: AppFactory, llm: LoopbackLLM) -> Iterator[tuple[TestClient, MemoryService]]:
    # A model configured (a retry needs one), no served workers: the test drives the queue.
    app = with_extraction(make_app(workers=0, llm_base_url=llm.base_url, llm_model="loopback"))
    with TestClient(app) as c:
        yield c, app.state.ctx.service


def extract(service: MemoryService, model: LlmExtractor, tenant: str, eid: str) -> Any:
    ep, _ = service.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id=eid, content="...", occurred_at=T0)
    )
    return on_episode_created(service, model, ep, ExtractMode.SYNC, settings=settings())


def test_failed_episode_is_visible_and_retried_over_http(
    api: tuple[TestClient, MemoryService], tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    client, service = api
    llm.script(completion("no JSON here"))
    extract(service, model, tenant, "e1")
    got = client.get(f"/v1/tenants/{tenant}/episodes/e1").json()
    assert (got["status"], got["attempts"], got["facts"]) == ("failed", 1, [])
    assert got["last_error"].startswith("model output is not JSON")
    r = client.post(f"/v1/tenants/{tenant}/episodes/e1/retry")
    assert r.status_code == 202, r.text
    assert (r.json()["status"], r.json()["attempts"], r.json()["last_error"]) == (
        "pending",
        0,
        None,
    )
    body = problem(client.post(f"/v1/tenants/{tenant}/episodes/e1/retry"), 409)
    assert "already queued" in body["detail"]
    problem(client.post(f"/v1/tenants/{tenant}/episodes/nope/retry"), 404)


def test_a_retry_that_nothing_could_extract_is_a_422_and_queues_nothing(
    make_app: AppFactory, tenant: str
) -> None:
    """Without a model, an episode no event mapping matches would be queued for a worker
    that never comes (it stayed pending for good); one a mapping matches is retried."""
    app = with_extraction(make_app(workers=0))
    with TestClient(app) as client:
        text = {"episode_id": "e1", "content": "Mira moved.", "occurred_at": "2026-06-01T09:00:00Z"}
        event = {
            "episode_id": "e2",
            "kind": "event",
            "content": {"type": "customer.tier_changed", "customer_id": "c1", "tier": "gold"},
            "occurred_at": "2026-06-01T09:00:00Z",
            "extract": "none",
        }
        schema = {
            "event_mappings": [
                {
                    "event_type": "customer.tier_changed",
                    "subject": {"field": "customer_id", "type": "Customer"},
                    "facts": [{"predicate": "tier", "value_field": "tier"}],
                }
            ]
        }
        base = f"/v1/tenants/{tenant}"
        for body in (text, event):
            r = client.post(f"{base}/episodes", json=body)
            assert r.status_code == 201, r.text
        assert client.put(f"{base}/schema", json=schema).status_code in (200, 201)
        body = problem(client.post(f"{base}/episodes/e1/retry"), 422)
        reason = (
            "a retry needs an extractor: no model is configured (SGAM_LLM_BASE_URL, "
            "SGAM_LLM_MODEL) and no event mapping of the schema matches this episode"
        )
        assert body["errors"] == [{"reason": reason, "field": "episode_id"}]
        got = client.get(f"{base}/episodes/e1").json()
        assert (got["status"], got["attempts"]) == ("stored", 0)  # nothing queued
        r = client.post(f"{base}/episodes/e2/retry")  # the mapping can: no model needed
        assert r.status_code == 202, r.text
        assert r.json()["status"] == "pending"
        problem(client.post(f"{base}/episodes/nope/retry"), 404)


def test_pending_candidates_are_listed_confirmed_and_rejected(
    api: tuple[TestClient, MemoryService], tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    client, service = api
    confirm = PredicateSpec(name="home_address", value_type="string", requires_confirmation=True)  # type: ignore[arg-type]
    service.put_schema(tenant_id=tenant, schema=MemorySchema(predicates=[confirm]))
    llm.script(
        answer([fact(predicate="home_address", value="1 Rue Haute")]),
        answer([fact(subject="ana", predicate="home_address", value="2 Rue Basse")]),
    )
    extract(service, model, tenant, "e1")
    extract(service, model, tenant, "e2")
    base = f"/v1/tenants/{tenant}/candidates"
    listed = client.get(base).json()["candidates"]
    assert [(c["episode_id"], c["delta"]["value"], c["reason"]) for c in listed] == [
        ("e1", "1 Rue Haute", "requires_confirmation"),
        ("e2", "2 Rue Basse", "requires_confirmation"),
    ]
    first, second = (c["candidate_id"] for c in listed)
    assert client.get(f"{base}/{first}").json()["status"] == "pending"

    r = client.post(f"{base}/{first}/confirm", json={"note": "checked with Mira"})
    assert r.status_code == 200, r.text
    assert r.json()["candidate"]["status"] == "confirmed"
    assert r.json()["candidate"]["note"] == "checked with Mira"
    assert [(f["subject"], f["value"], f["source_episode_id"]) for f in r.json()["facts"]] == [
        ("mira", "1 Rue Haute", "e1")
    ]
    r = client.post(f"{base}/{second}/reject")
    assert (r.status_code, r.json()["status"]) == (200, "rejected")
    problem(client.post(f"{base}/{second}/confirm"), 409)
    assert client.get(base).json()["candidates"] == []
    assert len(client.get(base, params={"status": "rejected"}).json()["candidates"]) == 1
    facts = client.get(f"/v1/tenants/{tenant}/facts", params={"predicate": "home_address"})
    assert [f["value"] for f in facts.json()["facts"]] == ["1 Rue Haute"]
    problem(client.get(f"{base}/pc_unknown"), 404)


def test_merge_candidates_are_listed_and_decided(
    api: tuple[TestClient, MemoryService], tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    client, service = api
    service.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id="e0", content="x", occurred_at=T0)
    )
    service.write_facts(
        tenant_id=tenant,
        deltas=[
            MemoryDelta(
                subject="Mira Patel",
                subject_type="Person",
                predicate="city",
                value="Lyon",
                source_episode_id="e0",
            )
        ],
    )
    llm.script(answer([fact(subject="Mira Patell", predicate="employer", value="Initech")]))
    extract(service, model, tenant, "e1")
    base = f"/v1/tenants/{tenant}/merge-candidates"
    [mc] = client.get(base).json()["merge_candidates"]
    assert (mc["entity_id"], mc["existing_entity_id"], mc["status"]) == (
        "Mira Patell",
        "Mira Patel",
        "open",
    )
    r = client.post(f"{base}/{mc['candidate_id']}/dismiss")
    assert (r.status_code, r.json()["status"]) == (200, "dismissed")
    problem(client.post(f"{base}/{mc['candidate_id']}/accept"), 409)
    assert client.get(base).json()["merge_candidates"] == []


def test_another_tenant_sees_nothing(
    make_app: AppFactory, tenant: str, other_tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    app = with_extraction(make_app(api_keys=f"{tenant}:ka,{other_tenant}:kb", workers=0))
    service: MemoryService = app.state.ctx.service
    confirm = PredicateSpec(name="home_address", value_type="string", requires_confirmation=True)  # type: ignore[arg-type]
    service.put_schema(tenant_id=tenant, schema=MemorySchema(predicates=[confirm]))
    llm.script(answer([fact(predicate="home_address", value="1 Rue Haute")]))
    [pending] = extract(service, model, tenant, "e1").pending
    with TestClient(app) as client:
        mine = {"Authorization": "Bearer ka"}
        theirs = {"Authorization": "Bearer kb"}
        assert (
            len(client.get(f"/v1/tenants/{tenant}/candidates", headers=mine).json()["candidates"])
            == 1
        )
        problem(client.get(f"/v1/tenants/{tenant}/candidates", headers=theirs), 404)
        path = f"/v1/tenants/{other_tenant}/candidates/{pending.candidate_id}"
        problem(client.post(f"{path}/confirm", headers=theirs), 404)
        problem(client.post(f"/v1/tenants/{other_tenant}/episodes/e1/retry", headers=theirs), 404)
    assert service.facts(tenant_id=tenant) == []


# -- the episodes route with an extractor configured ----------------------------------


def test_done_when_post_episode_sync_returns_the_fact_after_one_model_call(
    make_app: AppFactory, tenant: str, llm: LoopbackLLM
) -> None:
    llm.script(answer([fact()]))
    app = make_app(llm_base_url=llm.base_url, llm_model="loopback", workers=0)
    with TestClient(app) as client:
        r = client.post(
            f"/v1/tenants/{tenant}/episodes",
            json={
                "episode_id": "e1",
                "content": "my passport deadline is 2026-07-15",
                "occurred_at": "2026-06-01T09:00:00Z",
                "extract": "sync",
            },
        )
        assert r.status_code == 201, r.text
        [f] = r.json()["facts"]
        assert (f["source_episode_id"], f["valid_from"], f["value"]) == (
            "e1",
            "2026-06-01T09:00:00Z",
            "2026-07-15",
        )
        assert r.json()["status"] == "extracted"
    assert llm.calls == 1


def test_background_episode_lands_within_seconds_through_the_served_workers(
    make_app: AppFactory, tenant: str, llm: LoopbackLLM
) -> None:
    llm.script(answer([fact()]))
    app = make_app(
        llm_base_url=llm.base_url, llm_model="loopback", workers=1, worker_poll_seconds=0.1
    )
    with TestClient(app) as client:
        r = client.post(
            f"/v1/tenants/{tenant}/episodes",
            json={"episode_id": "e1", "content": "...", "occurred_at": "2026-06-01T09:00:00Z"},
        )
        assert (r.status_code, r.json()["status"]) == (201, "pending")  # background by default
        deadline = time.monotonic() + 10
        got: dict[str, Any] = {}
        while time.monotonic() < deadline:
            got = client.get(f"/v1/tenants/{tenant}/episodes/e1").json()
            if got["status"] == "extracted":
                break
            time.sleep(0.05)
    assert got["status"] == "extracted"
    assert [f["value"] for f in got["facts"]] == ["2026-07-15"]
    assert llm.calls == 1
