"""Retrieval: hybrid search and the smallest cited context (API.md, "Retrieval").

Both read the facts valid at ``as_of`` (default now) as known at ``known_at`` (default
now) only; the work is done by :mod:`graph.retrieval`. The embedding model loads in the
background at server start; a search embeds its query only (the indexer embeds items).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from api.deps import StoreDep, TenantDep
from api.routes.common import BODY_PROBLEMS, TENANT_PROBLEMS
from graph.errors import StoreUnavailableError
from graph.model import Entity, Episode, Fact, Instant
from graph.port import Store
from graph.retrieval import ContextBuilder, ItemKind, Retriever, SearchableStore, SearchFilters
from graph.retrieval.context import MAX_FACTS, MAX_TOKENS
from graph.retrieval.search import MAX_LIMIT, MAX_QUERY_CHARS

router = APIRouter(prefix="/v1/tenants/{tenant}", tags=["retrieval"], responses=TENANT_PROBLEMS)

Scope = Literal["facts", "entities", "episodes", "fact", "entity", "episode"]
_SCOPES: dict[str, ItemKind] = {
    "facts": ItemKind.FACT,
    "fact": ItemKind.FACT,
    "entities": ItemKind.ENTITY,
    "entity": ItemKind.ENTITY,
    "episodes": ItemKind.EPISODE,
    "episode": ItemKind.EPISODE,
}
Text = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)]


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: Text
    as_of: Instant | None = None
    known_at: Instant | None = None
    # Numbers are strict: "5" is a 422 naming the field, never read as 5.
    limit: StrictInt = Field(default=10, ge=1, le=MAX_LIMIT)
    scopes: list[Scope] = Field(default=["facts", "entities", "episodes"], min_length=1)
    filters: SearchFilters | None = Field(
        default=None,
        description="Restrict facts by entity_types (subject or object), predicates, "
        "memory_types; entity_types also restricts entities. Episodes are not filtered.",
    )


class SearchHit(BaseModel):
    kind: Literal["fact", "entity", "episode"]
    score: float = Field(description="In [0, 1], higher is better")
    item: Fact | Entity | Episode
    source_episode_ids: list[str]


class SearchResponse(BaseModel):
    results: list[SearchHit]
    degraded: list[Literal["vector"]] = Field(
        default_factory=list,
        description="Signals this search ran without: ['vector'] when no embedding model "
        "could be loaded (the results come from fulltext and the graph)",
    )


class ContextRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: Text
    as_of: Instant | None = None
    known_at: Instant | None = None
    max_facts: StrictInt = Field(default=20, ge=0, le=MAX_FACTS)
    max_tokens: StrictInt = Field(default=1500, ge=1, le=MAX_TOKENS)


class ContextResponse(BaseModel):
    facts: list[Fact]
    episodes: list[Episode]
    text: str


def _retriever(store: Store) -> Retriever:
    if not isinstance(store, SearchableStore):
        raise StoreUnavailableError(f"the store at {store.url} does not support search")
    return Retriever(store)


@router.post(
    "/search",
    response_model=SearchResponse,
    summary="Hybrid search (fulltext, vector, graph expansion) over what is valid at as_of",
    responses=BODY_PROBLEMS,
)
def search(tenant: TenantDep, body: SearchRequest, store: StoreDep) -> SearchResponse:
    return run_search(store, tenant_id=tenant, body=body)


def run_search(store: Store, *, tenant_id: str, body: SearchRequest) -> SearchResponse:
    """Hybrid search for one tenant (REST and MCP both call it)."""
    tenant = tenant_id
    answer = _retriever(store).answer(
        tenant_id=tenant,
        query=body.query,
        as_of=body.as_of,
        known_at=body.known_at,
        limit=body.limit,
        scopes=sorted({_SCOPES[s] for s in body.scopes}),
        filters=body.filters,
    )
    return SearchResponse(
        results=[
            SearchHit(
                kind=r.kind.value,
                score=r.score,
                item=r.item,
                source_episode_ids=r.source_episode_ids,
            )
            for r in answer.results
        ],
        degraded=["vector"] if "vector" in answer.degraded else [],
    )


@router.post(
    "/context",
    response_model=ContextResponse,
    summary="The smallest cited context for a question: exact state first, then search",
    responses=BODY_PROBLEMS,
)
def context(tenant: TenantDep, body: ContextRequest, store: StoreDep) -> ContextResponse:
    return build_context(store, tenant_id=tenant, body=body)


def build_context(store: Store, *, tenant_id: str, body: ContextRequest) -> ContextResponse:
    """The smallest cited context for one tenant (REST and MCP both call it)."""
    tenant = tenant_id
    ctx = ContextBuilder(_retriever(store)).build(
        tenant_id=tenant,
        question=body.question,
        as_of=body.as_of,
        known_at=body.known_at,
        max_facts=body.max_facts,
        max_tokens=body.max_tokens,
    )
    return ContextResponse(facts=ctx.facts, episodes=ctx.episodes, text=ctx.text)
