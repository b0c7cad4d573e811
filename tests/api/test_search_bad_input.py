"""Queries made of query-language syntax, empty or too long: a 200 or a clear 422, never a
500, on both stores (the ``make_app`` fixture runs on SQLite and on Neo4j).

Request words reach Lucene (Neo4j) and FTS5 (SQLite) only as quoted terms, so operators in
the text are inert: a query of nothing but operators finds nothing by fulltext (it may
still find neighbours by meaning), and one with a real word among them finds that word.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graph.embeddings import SentenceEmbedder, default_embedder
from graph.retrieval.search import MAX_FILTER_NAMES, MAX_QUERY_CHARS
from tests.api.conftest import AppFactory
from tests.api.helpers import problem
from tests.api.test_search_api import seed_mira, with_search

OPERATORS = 'AND OR NOT ( ) " * ~ ^ : \\ / - + { } [ ] && || ! ? NEAR'


@pytest.fixture(scope="session")
def embedder() -> SentenceEmbedder:
    return default_embedder()


@pytest.fixture
def api(make_app: AppFactory, embedder: SentenceEmbedder) -> Iterator[TestClient]:
    with TestClient(with_search(make_app())) as c:
        yield c


@pytest.mark.parametrize(
    "query",
    [
        OPERATORS,
        OPERATORS.replace(" ", ""),
        '"',
        "\\",
        "*",
        "(((",
        "scope:x",
        "body:(a OR b)",
        "NOT NOT NOT",
        "a* b~2 c^3 [a TO z] {a TO z}",
        "fact_text:* OR scope:*",
        "\x00\x01",
        "🙂" * 50,
    ],
)
def test_operator_queries_answer_200(api: TestClient, tenant: str, query: str) -> None:
    seed_mira(api, tenant)
    r = api.post(f"/v1/tenants/{tenant}/search", json={"query": query})
    assert r.status_code == 200, r.text
    results: list[dict[str, Any]] = r.json()["results"]
    assert isinstance(results, list)
    for hit in results:
        assert hit["kind"] in {"fact", "entity", "episode"}


def test_a_word_among_operators_is_still_found(api: TestClient, tenant: str) -> None:
    seed_mira(api, tenant)
    query = f"{OPERATORS} passport {OPERATORS} deadline*"
    r = api.post(
        f"/v1/tenants/{tenant}/search", json={"query": query, "scopes": ["facts"], "limit": 1}
    )
    assert r.status_code == 200, r.text
    assert [h["item"]["value"] for h in r.json()["results"]] == ["2026-06-30"]


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_an_empty_query_is_a_422_naming_the_field(api: TestClient, tenant: str, query: str) -> None:
    body = problem(api.post(f"/v1/tenants/{tenant}/search", json={"query": query}), 422)
    assert "query" in json.dumps(body)


@pytest.mark.parametrize("size", [MAX_QUERY_CHARS + 1, 10_240])
def test_a_long_query_is_a_422_naming_the_limit(api: TestClient, tenant: str, size: int) -> None:
    query = ("passport AND (deadline) " * 1000)[:size]
    body = problem(api.post(f"/v1/tenants/{tenant}/search", json={"query": query}), 422)
    assert str(MAX_QUERY_CHARS) in json.dumps(body)


def test_a_query_at_the_limit_is_answered(api: TestClient, tenant: str) -> None:
    seed_mira(api, tenant)
    query = ("passport deadline " + OPERATORS + " ") * 200
    r = api.post(f"/v1/tenants/{tenant}/search", json={"query": query[:MAX_QUERY_CHARS]})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    ("filters", "field"),
    [
        ({"entity_types": ["bad type"]}, "filters.entity_types.0"),
        ({"predicates": ["x" * 10_000]}, "filters.predicates.0"),
        ({"memory_types": ["Semantic!"]}, "filters.memory_types.0"),
        ({"predicates": [f"p{i}" for i in range(MAX_FILTER_NAMES + 1)]}, "filters.predicates"),
    ],
)
def test_a_filter_no_fact_can_match_is_a_422_naming_it(
    api: TestClient, tenant: str, filters: dict[str, Any], field: str
) -> None:
    # Such a filter answered 200 with nothing, as if the tenant held nothing of the kind.
    r = api.post(f"/v1/tenants/{tenant}/search", json={"query": "mira", "filters": filters})
    body = problem(r, 422)
    assert [e["field"] for e in body["errors"]] == [field]


def test_filters_as_the_schema_spells_names_still_filter(api: TestClient, tenant: str) -> None:
    seed_mira(api, tenant)
    base = f"/v1/tenants/{tenant}/search"

    def fact_predicates(filters: dict[str, Any]) -> list[str]:
        body = {"query": "passport deadline", "scopes": ["facts"], "filters": filters}
        r = api.post(base, json=body)
        assert r.status_code == 200, r.text
        return [x["item"]["predicate"] for x in r.json()["results"]]

    kept = {"entity_types": ["Person"], "predicates": ["passport_deadline"]}
    assert fact_predicates({**kept, "memory_types": ["semantic"]}) == ["passport_deadline"]
    assert fact_predicates({**kept, "predicates": ["lives_in"]}) == []
