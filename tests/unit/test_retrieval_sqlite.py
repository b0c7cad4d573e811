"""The SQLite search index: triggers keep the search tables in step with the ledger,
fulltext and vectors stay inside one tenant and one window."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from threading import Barrier, Thread

import numpy as np
import pytest

from graph.embeddings import EmbeddingUnavailableError, SentenceEmbedder, Vectors, default_embedder
from graph.model import EpisodeCreate, MemoryDelta
from graph.retrieval import ItemKind, Retriever, SearchAnswer, Window
from graph.retrieval.text import terms
from graph.service import MemoryService
from graph.stores.sqlite import vectors
from graph.stores.sqlite.store import SqliteStore
from graph.stores.sqlite.vectors import sign_bits
from graph.timeutil import utcnow

T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)


@pytest.fixture(scope="session")
def embedder() -> SentenceEmbedder:
    return default_embedder()


@pytest.fixture
def svc(sqlite_store: SqliteStore) -> MemoryService:
    return MemoryService(sqlite_store)


def now() -> Window:
    t = utcnow()
    return Window(as_of=t, known_at=t)


def episode(svc: MemoryService, tenant: str, eid: str, text: str, at: datetime = T0) -> None:
    svc.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id=eid, content=text, occurred_at=at)
    )


def count(store: SqliteStore, table: str, tenant: str) -> int:
    rows = store.conn.read(f"SELECT count(*) AS n FROM {table} WHERE tenant_id = ?", (tenant,))
    return int(rows[0]["n"])


def test_fact_text_is_the_fact_sentence_for_every_value_type(
    sqlite_store: SqliteStore, svc: MemoryService, tenant: str
) -> None:
    episode(svc, tenant, "e1", "x")
    written = svc.write_facts(
        tenant_id=tenant,
        deltas=[
            MemoryDelta(
                subject="mira",
                predicate="passport_deadline",
                value="2026-06-30",
                source_episode_id="e1",
            ),
            MemoryDelta(subject="mira", predicate="shoe_size", value=39, source_episode_id="e1"),
            MemoryDelta(subject="mira", predicate="height_m", value=1.72, source_episode_id="e1"),
            MemoryDelta(subject="mira", predicate="is_member", value=True, source_episode_id="e1"),
            MemoryDelta(
                subject="mira", predicate="works_at", object="acme", source_episode_id="e1"
            ),
        ],
    )
    rows = sqlite_store.conn.read(
        "SELECT item_id, body FROM search_docs WHERE tenant_id = ? AND kind = 'fact'", (tenant,)
    )
    bodies = {r["item_id"]: r["body"] for r in rows}
    assert {f.fact_id: f.sentence() for f in written.facts} == bodies
    assert "mira is member True" in bodies.values()


def test_fulltext_sees_writes_at_once_and_only_the_tenants_own(
    sqlite_store: SqliteStore, svc: MemoryService, tenant: str
) -> None:
    other = tenant + "-b"
    episode(svc, tenant, "e1", "Mira's passport deadline is 2026-07-15.")
    episode(svc, other, "e1", "Mira's passport deadline is 2026-07-15.")
    episode(svc, other, "e2", "Another passport story.")
    hits = sqlite_store.search.fulltext(
        tenant_id=tenant, kind=ItemKind.EPISODE, terms=terms("passport"), window=now(), limit=10
    )
    assert [h.item_id for h in hits] == ["e1"]
    assert hits[0].score > 0
    # Stemming: "deadlines" finds "deadline".
    assert sqlite_store.search.fulltext(
        tenant_id=tenant, kind=ItemKind.EPISODE, terms=["deadlines"], window=now(), limit=10
    )


def test_fulltext_operators_in_user_text_are_inert(
    sqlite_store: SqliteStore, svc: MemoryService, tenant: str
) -> None:
    episode(svc, tenant, "e1", "near the title")
    for text in ['NEAR("a" * b)', 'title:x OR "', "scope : x", "-) AND ("]:
        sqlite_store.search.fulltext(
            tenant_id=tenant, kind=ItemKind.EPISODE, terms=terms(text), window=now(), limit=5
        )
    hits = sqlite_store.search.fulltext(
        tenant_id=tenant, kind=ItemKind.EPISODE, terms=terms("NEAR title"), window=now(), limit=5
    )
    assert [h.item_id for h in hits] == ["e1"]


def test_fulltext_of_facts_is_limited_to_the_window(
    sqlite_store: SqliteStore, svc: MemoryService, tenant: str
) -> None:
    episode(svc, tenant, "e1", "x")
    svc.write_facts(
        tenant_id=tenant,
        deltas=[
            MemoryDelta(
                subject="mira",
                predicate="city",
                value="Paris",
                valid_from=T0,
                source_episode_id="e1",
            ),
            MemoryDelta(
                subject="mira",
                predicate="city",
                value="Rome",
                valid_from=T0 + timedelta(days=10),
                source_episode_id="e1",
            ),
        ],
    )

    def cities(at: datetime) -> list[str]:
        w = Window(as_of=at, known_at=utcnow())
        hits = sqlite_store.search.fulltext(
            tenant_id=tenant, kind=ItemKind.FACT, terms=["mira", "city"], window=w, limit=10
        )
        facts = sqlite_store.search.facts_by_id(
            tenant_id=tenant, fact_ids=[h.item_id for h in hits], window=w
        )
        return sorted(str(f.value) for f in facts.values())

    assert cities(T0 + timedelta(days=1)) == ["Paris"]
    assert cities(T0 + timedelta(days=11)) == ["Rome"]
    assert cities(T0 - timedelta(days=1)) == []


def test_vectors_are_made_once_and_found_after_each_write(
    sqlite_store: SqliteStore, svc: MemoryService, tenant: str, embedder: SentenceEmbedder
) -> None:
    episode(svc, tenant, "e1", "The quarterly budget review is on Friday.")
    assert sqlite_store.search.index_pending(tenant_id=tenant, embedder=embedder) == 1
    assert sqlite_store.search.index_pending(tenant_id=tenant, embedder=embedder) == 0
    q = embedder.encode(["When is the budget meeting?"])[0]

    def nearest() -> list[str]:
        return [
            h.item_id
            for h in sqlite_store.search.vector_search(
                tenant_id=tenant,
                kind=ItemKind.EPISODE,
                vector=q,
                model=embedder.name,
                window=now(),
                limit=5,
            )
        ]

    assert nearest() == ["e1"]
    episode(svc, tenant, "e2", "Budget meeting moved to Monday morning.")
    assert sqlite_store.search.index_pending(tenant_id=tenant, embedder=embedder) == 1
    assert set(nearest()) == {"e1", "e2"}  # the cached matrix took the new row
    cached = sqlite_store.search._vectors.get((tenant, ItemKind.EPISODE.value, embedder.name))
    assert cached is not None
    assert cached.matrix.shape[0] == 2
    assert np.array_equal(cached.bits, sign_bits(cached.matrix))  # and its sign bits
    svc.delete_episode(tenant_id=tenant, episode_id="e1")
    assert nearest() == ["e2"]  # and noticed the deletion
    assert count(sqlite_store, "search_vectors", tenant) == 1


@pytest.mark.parametrize("prefilter", [False, True], ids=["exact", "prefilter"])
def test_vector_search_widens_past_versions_outside_the_window(
    sqlite_store: SqliteStore,
    svc: MemoryService,
    tenant: str,
    embedder: SentenceEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    prefilter: bool,
) -> None:
    if prefilter:
        # the sign-bit pool of a large tenant, made tiny: the visible version lies outside
        # it, so the search must go on past the pool
        monkeypatch.setattr(vectors, "EXACT_UP_TO", 8)
        monkeypatch.setattr(vectors, "pool_size", lambda n, first: 4)
    episode(svc, tenant, "e1", "x")
    # 80 superseded values of one timeline, all closer to the query than the current one.
    deltas = [
        MemoryDelta(
            subject="mira",
            predicate="favourite_colour",
            value=f"blue {i}",
            valid_from=T0 + timedelta(days=i),
            source_episode_id="e1",
        )
        for i in range(80)
    ]
    deltas.append(
        MemoryDelta(
            subject="mira",
            predicate="favourite_colour",
            value="green",
            valid_from=T0 + timedelta(days=100),
            source_episode_id="e1",
        )
    )
    svc.write_facts(tenant_id=tenant, deltas=deltas)
    sqlite_store.search.index_pending(tenant_id=tenant, embedder=embedder)
    q = embedder.encode(["mira favourite colour blue"])[0]
    hits = sqlite_store.search.vector_search(
        tenant_id=tenant, kind=ItemKind.FACT, vector=q, model=embedder.name, window=now(), limit=3
    )
    facts = sqlite_store.search.facts_by_id(
        tenant_id=tenant, fact_ids=[h.item_id for h in hits], window=now()
    )
    assert [f.value for f in facts.values()] == ["green"]


def test_deletes_and_purges_leave_nothing_behind(
    sqlite_store: SqliteStore, svc: MemoryService, tenant: str, embedder: SentenceEmbedder
) -> None:
    episode(svc, tenant, "e1", "Mira's deadline is 2026-07-15.")
    episode(svc, tenant, "e2", "It is now 2026-06-30.", T0 + timedelta(days=2))
    for value, ep in (("2026-07-15", "e1"), ("2026-06-30", "e2")):
        svc.write_facts(
            tenant_id=tenant,
            deltas=[
                MemoryDelta(subject="mira", predicate="deadline", value=value, source_episode_id=ep)
            ],
        )
    sqlite_store.search.index_pending(tenant_id=tenant, embedder=embedder)
    assert count(sqlite_store, "search_docs", tenant) == 5  # 2 episodes, 1 entity, 2 facts
    assert count(sqlite_store, "search_vectors", tenant) == 5
    svc.delete_episode(tenant_id=tenant, episode_id="e2")
    docs = sqlite_store.conn.read(
        "SELECT kind, body FROM search_docs WHERE tenant_id = ? ORDER BY kind, body", (tenant,)
    )
    assert [(r["kind"], r["body"]) for r in docs] == [
        ("entity", "mira"),
        ("episode", "Mira's deadline is 2026-07-15."),
        ("fact", "mira deadline 2026-07-15"),
    ]
    assert count(sqlite_store, "search_vectors", tenant) == 3
    sqlite_store.purge_tenant(tenant_id=tenant)
    assert count(sqlite_store, "search_docs", tenant) == 0
    assert count(sqlite_store, "search_vectors", tenant) == 0
    fts = sqlite_store.conn.read(
        "SELECT count(*) AS n FROM search_fts WHERE search_fts MATCH 'mira'"
    )
    assert fts[0]["n"] == 0


def test_very_common_terms_are_left_out_of_large_indexes(
    sqlite_store: SqliteStore, svc: MemoryService, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(4):
        episode(svc, tenant, f"e{i}", f"common words everywhere, number {i}")
    episode(svc, tenant, "rare", "a rare sight")
    informative = sqlite_store.search._informative  # counted within the tenant's own items
    ep = ItemKind.EPISODE
    # Small index: every term stays (a term can still decide what matches).
    assert informative(tenant, ep, ["common", "rare"]) == ["common", "rare"]
    hits = sqlite_store.search.fulltext(
        tenant_id=tenant, kind=ItemKind.EPISODE, terms=["common", "rare"], window=now(), limit=10
    )
    assert {h.item_id for h in hits} == {"e0", "e1", "e2", "e3", "rare"}
    # Past the size threshold, a term in half the rows or more goes ("sights" and "sight"
    # share the stem the index stores).
    monkeypatch.setattr("graph.stores.sqlite.search._COMMON_DF", 1)
    assert informative(tenant, ep, ["common", "sights"]) == ["sights"]
    # The rarest is kept.
    assert informative(tenant, ep, ["common", "everywhere"]) == ["common"]
    hits = sqlite_store.search.fulltext(
        tenant_id=tenant, kind=ItemKind.EPISODE, terms=["common", "rare"], window=now(), limit=10
    )
    assert [h.item_id for h in hits] == ["rare"]


def test_cached_document_counts_follow_writes_deletes_and_stay_per_tenant(
    sqlite_store: SqliteStore, svc: MemoryService, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Counts are cached per tenant and kind; every answer must be the one a fresh count
    # gives, whatever was written, deleted or searched before.
    monkeypatch.setattr("graph.stores.sqlite.search._COMMON_DF", 2)
    search = sqlite_store.search
    other = tenant + "-other"
    for i in range(3):
        episode(svc, tenant, f"e{i}", f"lamp number {i}")
    episode(svc, tenant, "m", "a moth")
    # "lamp" is in 3 of 4 rows: common; "moth" is kept.
    assert search._informative(tenant, ItemKind.EPISODE, ["lamp", "moth"]) == ["moth"]
    # Another tenant's rows (many, all without "lamp") do not change this tenant's counts,
    # and this tenant's cached counts do not decide the other's: one lamp in its 5 rows.
    for i in range(5):
        episode(svc, other, f"o{i}", "lamp" if i == 0 else f"moth {i}")
    assert search._informative(other, ItemKind.EPISODE, ["lamp", "moth"]) == ["lamp"]
    assert search._informative(tenant, ItemKind.EPISODE, ["lamp", "moth"]) == ["moth"]
    # New rows are counted on top of the cached counts: 3 of 8 hold "lamp" now.
    for i in range(4):
        episode(svc, tenant, f"n{i}", f"moth {i}")
    assert search._informative(tenant, ItemKind.EPISODE, ["lamp", "moth"]) == ["lamp"]
    # A delete invalidates them: with two moth episodes gone, "moth" is in 3 of 6 rows and
    # "lamp" in 3 of 6; both are common, and the rarer (a tie: the first) is kept.
    for eid in ("n0", "n1"):
        svc.delete_episode(tenant_id=tenant, episode_id=eid)
    assert search._informative(tenant, ItemKind.EPISODE, ["moth", "lamp"]) == ["moth"]
    # With a lamp gone too, "lamp" (2 of 5) is no longer common; stale counts would still
    # say both are, and keep "moth".
    svc.delete_episode(tenant_id=tenant, episode_id="e0")
    assert search._informative(tenant, ItemKind.EPISODE, ["moth", "lamp"]) == ["lamp"]
    hits = search.fulltext(
        tenant_id=tenant, kind=ItemKind.EPISODE, terms=["moth", "lamp"], window=now(), limit=10
    )
    assert {h.item_id for h in hits} == {"e1", "e2"}


def test_a_renamed_entity_is_searched_and_embedded_by_its_new_name(
    sqlite_store: SqliteStore, svc: MemoryService, tenant: str, embedder: SentenceEmbedder
) -> None:
    episode(svc, tenant, "e1", "x")
    svc.write_facts(
        tenant_id=tenant,
        deltas=[MemoryDelta(subject="p1", predicate="team", value="blue", source_episode_id="e1")],
    )
    assert sqlite_store.search.index_pending(tenant_id=tenant, embedder=embedder) == 3
    with sqlite_store.conn.write() as c:  # no write path renames yet; the trigger must cope
        c.execute(
            "UPDATE entities SET name = 'Priya Rao', aliases_json = '[\"PR\"]'"
            " WHERE tenant_id = ? AND entity_id = 'p1'",
            (tenant,),
        )
    hits = sqlite_store.search.fulltext(
        tenant_id=tenant, kind=ItemKind.ENTITY, terms=["priya"], window=now(), limit=5
    )
    assert [h.item_id for h in hits] == ["p1"]
    assert sqlite_store.search.index_pending(tenant_id=tenant, embedder=embedder) == 1
    q = embedder.encode(["Priya Rao"])[0]
    near = sqlite_store.search.vector_search(
        tenant_id=tenant, kind=ItemKind.ENTITY, vector=q, model=embedder.name, window=now(), limit=1
    )
    assert near[0].item_id == "p1"
    assert near[0].score > 0.9


class _ModelGoneFor:
    """The real model, except for these queries: as if it could not load for them."""

    def __init__(self, inner: SentenceEmbedder, gone: set[str]) -> None:
        self.inner = inner
        self.gone = gone

    @property
    def name(self) -> str:
        return self.inner.name

    def encode(self, texts: Sequence[str]) -> Vectors:
        if any(t in self.gone for t in texts):
            raise EmbeddingUnavailableError("no model for this one")
        return self.inner.encode(texts)


def test_degradation_belongs_to_one_search_not_to_the_shared_retriever(
    sqlite_store: SqliteStore, svc: MemoryService, tenant: str, embedder: SentenceEmbedder
) -> None:
    """One search that ran without vectors must not mark the next (or a concurrent) one
    as degraded: the Retriever is shared by requests."""
    episode(svc, tenant, "e1", "zebrafish assay finished")
    r = Retriever(sqlite_store, embedder=_ModelGoneFor(embedder, {"assay down"}))
    down = r.answer(tenant_id=tenant, query="assay down")
    up = r.answer(tenant_id=tenant, query="zebrafish assay")
    assert (down.degraded, up.degraded) == (("vector",), ())
    assert [x.item.model_dump().get("episode_id") for x in up.results] == ["e1"]

    answers: dict[str, SearchAnswer] = {}
    start = Barrier(8)

    def run(q: str) -> None:
        start.wait()
        answers[q] = r.answer(tenant_id=tenant, query=q)

    queries = [f"zebrafish {i}" for i in range(4)] + ["assay down"] * 4
    threads = [Thread(target=run, args=(q,)) for q in dict.fromkeys(queries)]
    threads += [Thread(target=start.wait) for _ in range(8 - len(threads))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {q: a.degraded for q, a in answers.items()} == {
        **{f"zebrafish {i}": () for i in range(4)},
        "assay down": ("vector",),
    }
