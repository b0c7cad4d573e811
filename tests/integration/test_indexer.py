"""The indexer, on both stores: embedding off the request path, per-tenant isolation and
fairness, and the index-lag figures (graph.retrieval.indexer)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import pytest

from graph.embeddings import SentenceEmbedder, Vectors, default_embedder
from graph.model import EpisodeCreate, MemoryDelta
from graph.port import Store
from graph.retrieval import ItemKind, Retriever, SearchableStore
from graph.retrieval.indexer import Indexer, round_robin
from graph.service import MemoryService


@pytest.fixture(scope="session")
def embedder() -> SentenceEmbedder:
    return default_embedder()


class CountingEmbedder:
    """The real model, counting the texts it is asked to encode (and keeping them)."""

    def __init__(self, inner: SentenceEmbedder) -> None:
        self.inner = inner
        self.calls: list[int] = []
        self.texts: list[str] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(len(texts))
        self.texts.extend(texts)
        return self.inner.encode(texts)


@pytest.fixture
def tenant_b(store: Store) -> Iterator[str]:
    t = "b-" + uuid.uuid4().hex[:12]
    yield t
    store.purge_tenant(tenant_id=t)


def searchable(store: Store) -> SearchableStore:
    assert isinstance(store, SearchableStore)
    return store


def pending_of(store: Store, tenant: str, model: str) -> dict[str, int]:
    out = {k.value: 0 for k in ItemKind}
    for p in searchable(store).search.pending(model=model):
        if p.tenant_id == tenant:
            out[p.kind.value] += p.count
    return out


def write(service: MemoryService, tenant: str, entity: str, words: str, n: int = 1) -> None:
    """``n`` episodes and facts about ``entity`` whose text is ``words``."""
    for i in range(n):
        service.add_episode(
            tenant_id=tenant,
            body=EpisodeCreate.model_validate(
                {
                    "episode_id": f"ep-{i}",
                    "kind": "message",
                    "content": f"{entity} said: {words} number {i}",
                    "occurred_at": "2026-01-01T00:00:00Z",
                }
            ),
        )
        service.write_facts(
            tenant_id=tenant,
            deltas=[
                MemoryDelta.model_validate(
                    {
                        "subject": entity,
                        "predicate": f"note_{i}",
                        "value": f"{words} {i}",
                        "valid_from": "2026-01-01T00:00:00Z",
                        "source_episode_id": f"ep-{i}",
                    }
                )
            ],
        )


def test_unembedded_items_are_found_by_fulltext_and_search_embeds_only_its_query(
    store: Store, service: MemoryService, tenant: str, embedder: SentenceEmbedder
) -> None:
    write(service, tenant, "mira", "zebrafish assay finished", n=3)
    counting = CountingEmbedder(embedder)
    before = pending_of(store, tenant, embedder.name)
    assert before["episode"] == 3
    assert before["fact"] == 3
    assert before["entity"] >= 1

    # No indexer runs: the items have no vectors, yet search finds them by fulltext.
    retriever = Retriever(searchable(store), embedder=counting)
    answer = retriever.answer(tenant_id=tenant, query="zebrafish assay", limit=10)
    results = answer.results
    found = {r.item.model_dump(mode="json").get("episode_id") for r in results}
    assert {"ep-0", "ep-1", "ep-2"} <= found
    assert any(r.kind == ItemKind.FACT for r in results)
    assert answer.degraded == ()
    # The search embedded its query and nothing else; the items still wait for the indexer.
    assert counting.calls == [1]
    assert pending_of(store, tenant, embedder.name) == before

    # The indexer embeds them; nothing of this tenant waits afterwards.
    indexer = Indexer(searchable(store), embedder=embedder)
    assert indexer.index_tenant(tenant, limit=10_000) == sum(before.values())
    assert pending_of(store, tenant, embedder.name) == {k.value: 0 for k in ItemKind}


def test_indexing_one_tenant_never_touches_another(
    store: Store,
    service: MemoryService,
    tenant: str,
    tenant_b: str,
    embedder: SentenceEmbedder,
) -> None:
    # Same entity and episode ids in both tenants; B's text is distinctive.
    write(service, tenant_b, "mira", "quokka zanzibar marmalade", n=2)
    write(service, tenant, "mira", "passport renewal office", n=2)
    model = embedder.name
    a_before = pending_of(store, tenant, model)
    b_before = pending_of(store, tenant_b, model)
    assert sum(b_before.values()) >= 5

    indexer = Indexer(searchable(store), embedder=embedder)
    # A's pass embeds exactly A's items, and B's still all wait.
    assert indexer.index_tenant(tenant, limit=10_000) == sum(a_before.values())
    assert pending_of(store, tenant_b, model) == b_before

    # Nothing of B reaches A: not by search, not by A's vectors.
    retriever = Retriever(searchable(store), embedder=embedder)
    results = retriever.search(tenant_id=tenant, query="quokka zanzibar marmalade", limit=20)
    text = " ".join(r.item.model_dump_json() for r in results)
    for word in ("quokka", "zanzibar", "marmalade"):
        assert word not in text
    vec = embedder.encode(["quokka zanzibar marmalade"])[0]
    window = retriever.window()
    for kind in ItemKind:
        hits = searchable(store).search.vector_search(
            tenant_id=tenant, kind=kind, vector=vec, model=model, window=window, limit=20
        )
        assert hits, f"A's own {kind.value} vectors are searchable"
        # A's items are about a passport; a vector made from B's text would score near 1.
        assert max(h.score for h in hits) < 0.6, (kind, hits)

    # B's own pass then embeds B's items, under B.
    assert indexer.index_tenant(tenant_b, limit=10_000) == sum(b_before.values())
    hits = searchable(store).search.vector_search(
        tenant_id=tenant_b, kind=ItemKind.EPISODE, vector=vec, model=model, window=window, limit=5
    )
    assert hits
    assert hits[0].score > 0.6


def test_round_robin_serves_every_tenant_each_round(
    store: Store,
    service: MemoryService,
    tenant: str,
    tenant_b: str,
    embedder: SentenceEmbedder,
) -> None:
    write(service, tenant, "mira", "a long backlog item", n=6)  # about 13 items
    write(service, tenant_b, "noor", "one small item", n=1)  # 3 items
    model = embedder.name
    indexer = Indexer(searchable(store), embedder=embedder, batch=3)
    indexer.run_once()
    # After one round B is done although A wrote first and has more: one batch each.
    assert sum(pending_of(store, tenant_b, model).values()) == 0
    a_left = sum(pending_of(store, tenant, model).values())
    assert a_left > 0
    indexer.drain()
    assert sum(pending_of(store, tenant, model).values()) == 0


def test_round_robin_order() -> None:
    assert round_robin(["a", "b", "c"], None) == ["a", "b", "c"]
    assert round_robin(["a", "b", "c"], "a") == ["b", "c", "a"]
    assert round_robin(["a", "c"], "b") == ["c", "a"]
    assert round_robin(["a", "b"], "z") == ["a", "b"]


def test_pending_reports_count_and_oldest_time(
    store: Store, service: MemoryService, tenant: str, embedder: SentenceEmbedder
) -> None:
    start = datetime.now(UTC)
    write(service, tenant, "mira", "lag figures", n=2)
    waiting = searchable(store).search.pending(model=embedder.name)
    mine = [p for p in waiting if p.tenant_id == tenant]
    by_kind = {p.kind: p for p in mine}
    assert by_kind[ItemKind.EPISODE].count == 2
    assert by_kind[ItemKind.FACT].count == 2
    for p in mine:
        assert p.oldest is not None
        assert p.oldest >= start.replace(microsecond=0)
    Indexer(searchable(store), embedder=embedder).index_tenant(tenant, limit=10_000)
    assert not [
        p for p in searchable(store).search.pending(model=embedder.name) if p.tenant_id == tenant
    ]
