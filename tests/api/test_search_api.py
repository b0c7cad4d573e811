"""POST /search and /context through the app (API.md, "Retrieval"), on both stores."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.routes import search as search_routes
from graph.embeddings import SentenceEmbedder, default_embedder
from tests.api.conftest import AppFactory
from tests.api.helpers import problem
from tests.conftest import SCENARIOS

MIRA = SCENARIOS / "mira.json"
OLD_VALUES = ("2026-07-15", "2026-08-01")


@pytest.fixture(scope="session")
def embedder() -> SentenceEmbedder:
    return default_embedder()


def with_search(app: FastAPI) -> FastAPI:
    """The app with the retrieval routes, whether or not the app factory includes them."""
    if "/v1/tenants/{tenant}/search" not in app.openapi()["paths"]:
        app.include_router(search_routes.router)
        app.openapi_schema = None  # documented again with the new routes
    return app


@pytest.fixture
def api(make_app: AppFactory, embedder: SentenceEmbedder) -> Iterator[TestClient]:
    with TestClient(with_search(make_app())) as c:
        yield c


def seed_mira(client: TestClient, tenant: str) -> None:
    for step in json.loads(MIRA.read_text(encoding="utf-8"))["steps"]:
        if "episode" in step:
            r = client.post(f"/v1/tenants/{tenant}/episodes", json=step["episode"])
            assert r.status_code == 201, r.text
        elif "facts" in step:
            r = client.post(f"/v1/tenants/{tenant}/facts", json={"facts": step["facts"]})
            assert r.status_code == 201, r.text
    indexed(client)


def indexed(client: TestClient, timeout: float = 120.0) -> None:
    """Wait until the server's indexer has embedded everything written (or no model
    loads): results then do not depend on how far it got when the search runs."""
    deadline = time.monotonic() + timeout
    while True:
        emb = client.get("/readyz").json()["embeddings"]
        if emb["model_state"] == "failed" or (emb["model_ready"] and emb["pending"] == 0):
            return
        assert time.monotonic() < deadline, emb
        time.sleep(0.2)


def test_search_answers_the_contract_shape_with_the_current_value(
    api: TestClient, tenant: str
) -> None:
    seed_mira(api, tenant)
    r = api.post(f"/v1/tenants/{tenant}/search", json={"query": "Mira passport deadline"})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    assert list(body) == ["results", "degraded"]
    assert body["degraded"] == []
    results = body["results"]
    assert results
    for hit in results:
        assert set(hit) == {"kind", "score", "item", "source_episode_ids"}
        assert hit["kind"] in {"fact", "entity", "episode"}
        assert 0.0 <= hit["score"] <= 1.0
    facts = [h for h in results if h["kind"] == "fact"]
    assert [(f["item"]["value"], f["source_episode_ids"]) for f in facts] == [
        ("2026-06-30", ["e2"])
    ]
    assert {
        "fact_id",
        "subject",
        "predicate",
        "valid_from",
        "valid_to",
        "recorded_at",
        "source_episode_id",
        "supersedes",
        "confidence",
        "memory_type",
        "schema_version",
    } <= set(facts[0]["item"])
    for old in OLD_VALUES:
        assert old not in r.text


def test_search_scopes_limit_and_as_of(api: TestClient, tenant: str) -> None:
    seed_mira(api, tenant)
    r = api.post(
        f"/v1/tenants/{tenant}/search",
        json={
            "query": "Mira passport deadline",
            "scopes": ["facts"],
            "limit": 1,
            "as_of": "2026-05-31T00:00:00Z",
        },
    )
    assert r.status_code == 200, r.text
    results = r.json()["results"]
    assert [(h["kind"], h["item"]["value"]) for h in results] == [("fact", "2026-08-01")]
    episodes = api.post(
        f"/v1/tenants/{tenant}/search", json={"query": "passport", "scopes": ["episodes"]}
    ).json()["results"]
    assert {h["kind"] for h in episodes} == {"episode"}
    assert [h["item"]["episode_id"] for h in episodes] == ["e2"]


def test_context_now_and_as_of(api: TestClient, tenant: str) -> None:
    seed_mira(api, tenant)
    q = {"question": "When is Mira's passport deadline?"}
    now = api.post(f"/v1/tenants/{tenant}/context", json=q)
    assert now.status_code == 200, now.text
    body = now.json()
    assert set(body) == {"facts", "episodes", "text"}
    assert [(f["value"], f["source_episode_id"]) for f in body["facts"]] == [("2026-06-30", "e2")]
    assert "2026-06-30" in body["text"]
    assert "source: e2" in body["text"]
    for old in OLD_VALUES:
        assert old not in now.text
    then = api.post(
        f"/v1/tenants/{tenant}/context", json={**q, "as_of": "2026-06-02T00:00:00Z", "max_facts": 5}
    )
    assert then.status_code == 200, then.text
    assert [f["value"] for f in then.json()["facts"]] == ["2026-07-15"]
    assert "2026-07-15" in then.json()["text"]
    assert "2026-06-30" not in then.text
    assert "2026-08-01" not in then.text


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("search", {}),
        ("search", {"query": ""}),
        ("search", {"query": "x", "as_of": "2026-06-01T00:00:00"}),  # no offset
        ("search", {"query": "x", "scopes": ["secrets"]}),
        ("search", {"query": "x", "scopes": []}),
        ("search", {"query": "x", "limit": 0}),
        ("search", {"query": "x", "limit": 101}),
        ("search", {"query": "x", "surprise": 1}),
        ("search", {"query": "   "}),
        ("context", {"question": "x", "max_tokens": 0}),
        ("context", {"question": "x", "max_facts": -1}),
        ("context", {}),
    ],
)
def test_bad_input_is_a_422_problem(
    api: TestClient, tenant: str, path: str, body: dict[str, Any]
) -> None:
    problem(api.post(f"/v1/tenants/{tenant}/{path}", json=body), 422)


def test_a_foreign_tenant_is_not_found(
    make_app: AppFactory, embedder: SentenceEmbedder, tenant: str, other_tenant: str
) -> None:
    app = with_search(make_app(api_keys=f"{tenant}:k-a,{other_tenant}:k-b"))
    with TestClient(app) as c:
        mine = {"Authorization": "Bearer k-a"}
        seed = c.post(
            f"/v1/tenants/{other_tenant}/episodes",
            headers={"Authorization": "Bearer k-b"},
            json={
                "episode_id": "secret",
                "content": "Mira passport",
                "occurred_at": "2026-06-01T00:00:00Z",
            },
        )
        assert seed.status_code == 201, seed.text
        for path, body in (
            ("search", {"query": "Mira passport"}),
            ("context", {"question": "Mira passport?"}),
        ):
            problem(c.post(f"/v1/tenants/{other_tenant}/{path}", headers=mine, json=body), 404)
            own = c.post(f"/v1/tenants/{tenant}/{path}", headers=mine, json=body)
            assert own.status_code == 200, own.text
            assert "secret" not in own.text
        problem(c.post(f"/v1/tenants/{tenant}/search", json={"query": "x"}), 401)
