"""Starvation: a tenant's search results must not depend on what other tenants hold.

Another tenant holds 20,000 facts that match the query better than the small tenant's
one fact (every query word, in a shorter sentence). Indexes that span tenants and filter
afterwards return the big tenant's rows first and, past their fetch cap, none of the
small tenant's; filtered inside the index, the small tenant still gets its fact first —
from fulltext, from the vector index and from the fused search. Run on both stores.

The big tenant's 20,000 sentences differ only in a number; they are embedded by the real
model once per distinct sentence with the number taken out (:class:`_DigitBlind`), so the
test pays for a handful of encodings, not 20,000.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from graph.embeddings import SentenceEmbedder, Vectors, default_embedder
from graph.model import EpisodeCreate, MemoryDelta
from graph.port import Store
from graph.retrieval import ItemKind, Retriever, SearchableStore
from graph.retrieval.text import terms
from graph.service import MemoryService

QUERY = "overdue invoice payment reminder"
NOISE = 20_000
BATCH = 1000
SINCE = "2026-01-01T00:00:00Z"


def _episode(service: MemoryService, tenant: str, text: str) -> None:
    body = EpisodeCreate.model_validate(
        {"episode_id": "src", "kind": "message", "occurred_at": SINCE, "content": text}
    )
    service.add_episode(tenant_id=tenant, body=body)


class _DigitBlind:
    """The real model, fed each text with its digits taken out, one encoding per distinct
    result: the big tenant's sentences cost one encoding, and their vectors are real."""

    def __init__(self, inner: SentenceEmbedder) -> None:
        self.inner = inner
        self.cache: dict[str, np.ndarray] = {}

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode(self, texts: Sequence[str]) -> Vectors:
        keys = [re.sub(r"\d+", "", t) for t in texts]
        todo = sorted({k for k in keys if k not in self.cache})
        if todo:
            for k, v in zip(todo, self.inner.encode(todo), strict=True):
                self.cache[k] = np.asarray(v, dtype=np.float32)
        return np.vstack([self.cache[k] for k in keys])


@pytest.fixture(scope="module")
def embedder() -> SentenceEmbedder:
    return default_embedder()


@pytest.fixture
def big_tenant(store: Store) -> Iterator[str]:
    tenant = "big-" + uuid.uuid4().hex[:10]
    try:
        yield tenant
    finally:
        store.purge_tenant(tenant_id=tenant)


def _fill(store: Store, big: str, embedder: SentenceEmbedder) -> None:
    service = MemoryService(store)
    _episode(service, big, "invoices")
    for start in range(0, NOISE, BATCH):
        deltas = [
            MemoryDelta(
                subject=f"invoice-{i}",
                subject_type="Invoice",
                predicate="reminder",
                value="overdue invoice payment reminder",
                valid_from=SINCE,
                source_episode_id="src",
            )
            for i in range(start, start + BATCH)
        ]
        service.write_facts(tenant_id=big, deltas=deltas)
    assert isinstance(store, SearchableStore)
    store.search.index_pending(tenant_id=big, embedder=_DigitBlind(embedder), batch_size=4096)


def test_small_tenant_is_not_crowded_out(
    store: Store, tenant: str, big_tenant: str, embedder: SentenceEmbedder
) -> None:
    assert isinstance(store, SearchableStore)
    service = MemoryService(store)
    _episode(service, tenant, "acme")
    mine = service.write_facts(
        tenant_id=tenant,
        deltas=[
            MemoryDelta(
                subject="acme",
                subject_type="Customer",
                predicate="note",
                value="an invoice is overdue since March",
                valid_from=SINCE,
                source_episode_id="src",
            )
        ],
    )
    fact_id = mine.facts[0].fact_id
    _fill(store, big_tenant, embedder)

    retriever = Retriever(store, embedder=embedder)
    retriever.ensure_indexed(tenant)
    window = retriever.window()
    index = store.search
    # The big tenant really does match better: its own search ranks its rows first.
    theirs = index.fulltext(
        tenant_id=big_tenant, kind=ItemKind.FACT, terms=terms(QUERY), window=window, limit=3
    )
    assert len(theirs) == 3
    qvec = retriever.embed_query(QUERY)
    near = index.vector_search(
        tenant_id=big_tenant,
        kind=ItemKind.FACT,
        vector=qvec,
        model=embedder.name,
        window=window,
        limit=3,
    )
    assert len(near) == 3

    ft = index.fulltext(
        tenant_id=tenant, kind=ItemKind.FACT, terms=terms(QUERY), window=window, limit=5
    )
    assert [h.item_id for h in ft] == [fact_id]
    # A worse match (two of the four query words; the big tenant's rows hold all four),
    # found all the same. Scores do not compare across tenants: each tenant's BM25 uses
    # its own document frequencies (test_fulltext_order_ignores_other_tenants).

    vec = index.vector_search(
        tenant_id=tenant,
        kind=ItemKind.FACT,
        vector=qvec,
        model=embedder.name,
        window=window,
        limit=5,
    )
    assert [h.item_id for h in vec] == [fact_id]
    assert vec[0].score < near[0].score

    found = retriever.search(tenant_id=tenant, query=QUERY, scopes=[ItemKind.FACT], limit=5)
    assert [r.item.fact_id for r in found if r.kind == ItemKind.FACT][:1] == [fact_id]
    assert all(r.item.tenant_id == tenant for r in found)


def test_fulltext_order_ignores_other_tenants(store: Store, tenant: str, big_tenant: str) -> None:
    """A tenant's fulltext order is its own: another tenant writing many rows that hold
    one of the query's words does not change it. (Scores move a little: Lucene's and
    FTS5's document count and average length span the index; the document frequencies,
    which decide, are the tenant's own.)"""
    assert isinstance(store, SearchableStore)
    service = MemoryService(store)
    _episode(service, tenant, "acme")
    # Within this tenant both words are equally rare, and the second row says "notice"
    # twice: it ranks first. Counted over every tenant, "notice" (in 400 rows of the other
    # tenant) would weigh next to nothing, and the first row would.
    values = ["renewal due", "notice, notice again", "an unrelated remark"]
    written = service.write_facts(
        tenant_id=tenant,
        deltas=[
            MemoryDelta(
                subject=f"doc-{i}",
                subject_type="Document",
                predicate="note",
                value=v,
                valid_from=SINCE,
                source_episode_id="src",
            )
            for i, v in enumerate(values)
        ],
    )
    assert len(written.facts) == 3
    window = Retriever.window()

    def ranked() -> list[str]:
        hits = store.search.fulltext(
            tenant_id=tenant,
            kind=ItemKind.FACT,
            terms=terms("renewal notice"),
            window=window,
            limit=5,
        )
        return [h.item_id for h in hits]

    before = ranked()
    assert before == [written.facts[1].fact_id, written.facts[0].fact_id]
    _episode(service, big_tenant, "noise")
    service.write_facts(
        tenant_id=big_tenant,
        deltas=[
            MemoryDelta(
                subject=f"n-{i}",
                subject_type="Document",
                predicate="note",
                value=f"notice number {i}",
                valid_from=SINCE,
                source_episode_id="src",
            )
            for i in range(400)
        ],
    )
    assert ranked() == before
