"""Fact vectors on Neo4j: one FactVector node per fact, whatever its versions.

Cutting an interval retires a version and inserts its successor under the same fact id:
the fact keeps its one vector, nothing is embedded again and no index entry changes.
``live`` follows whether the fact has a version open in system time; a fact left without
any version loses its vector (episode deletion, erasure, tenant purge). A store whose
versions still carry their vectors is migrated to that layout."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from neo4j import Driver

from graph.embeddings import SentenceEmbedder, default_embedder
from graph.erasure import erasable, forget
from graph.errors import TransientStoreError
from graph.model import ConflictPolicy, EpisodeCreate, MemoryDelta
from graph.port import Store
from graph.retrieval import ItemKind, Retriever, SearchableStore
from graph.service import MemoryService
from tests.integration.test_indexer import CountingEmbedder
from tests.integration.test_neo4j_search_migration import _indexes

pytestmark = pytest.mark.neo4j

T0 = "2026-01-01T00:00:00Z"
T1 = "2026-03-01T00:00:00Z"
AT0 = datetime(2026, 1, 1, tzinfo=UTC)
AT1 = datetime(2026, 3, 1, tzinfo=UTC)

# The fact vector index as an earlier layout defined it: filtered by three properties,
# before the scope keys.
THREE_PROPERTY_INDEX = (
    "CYPHER 25 CREATE VECTOR INDEX fact_vector FOR (v:FactVector) ON (v.embedding) "
    "WITH [v.tenant_id, v.live, v.embedding_model] "
    "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine', "
    "`vector.quantization.enabled`: false}}"
)

# The fact vector index as the previous layout defined it: on the versions themselves.
OLD_INDEX = (
    "CYPHER 25 CREATE VECTOR INDEX fact_embedding FOR ()-[r:FACT]-() ON (r.embedding) "
    "WITH [r.tenant_id, r.current, r.embedding_model] "
    "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}"
)


@pytest.fixture(scope="module")
def embedder() -> SentenceEmbedder:
    return default_embedder()


def vectors(driver: Driver, database: str, tenant: str) -> dict[str, tuple[bool, list[float]]]:
    """The tenant's fact vectors: fact id → (live, embedding). Each vector's index filter
    properties agree with them: scope is the tenant and model, live_scope the same while
    live and null otherwise."""
    rows, _, _ = driver.execute_query(
        "MATCH (v:FactVector {tenant_id: $t}) RETURN v.fact_id AS id, v.live AS live, "
        "v.embedding AS embedding, v.embedding_model AS model, v.scope AS scope, "
        "v.live_scope AS live_scope",
        t=tenant,
        database_=database,
    )
    for r in rows:
        assert r["scope"] == f"{tenant} {r['model']}", r["id"]
        assert r["live_scope"] == (r["scope"] if r["live"] else None), r["id"]
    return {r["id"]: (r["live"], r["embedding"]) for r in rows}


def pending_facts(store: SearchableStore, tenant: str, model: str) -> int:
    return sum(
        p.count
        for p in store.search.pending(model=model)
        if p.tenant_id == tenant and p.kind == ItemKind.FACT
    )


def address(value: str, start: str, episode: str, subject: str = "ada") -> MemoryDelta:
    return MemoryDelta(
        subject=subject,
        subject_type="Person",
        predicate="address",
        value=value,
        valid_from=start,
        source_episode_id=episode,
    )


def nearest(
    store: SearchableStore, tenant: str, embedder: SentenceEmbedder, text: str, **window: Any
) -> list[str]:
    hits = store.search.vector_search(
        tenant_id=tenant,
        kind=ItemKind.FACT,
        vector=embedder.encode([text])[0],
        model=embedder.name,
        window=Retriever.window(**window),
        limit=10,
    )
    return [h.item_id for h in hits]


def episode(service: MemoryService, tenant: str, episode_id: str) -> None:
    service.add_episode(
        tenant_id=tenant,
        body=EpisodeCreate.model_validate(
            {"episode_id": episode_id, "occurred_at": T0, "content": f"note {episode_id}"}
        ),
    )


def test_a_fact_keeps_one_vector_and_is_live_while_a_version_is_open(
    neo4j_store: Store, ntenant: str, driver: Driver, database: str, embedder: SentenceEmbedder
) -> None:
    assert isinstance(neo4j_store, SearchableStore)
    store, model = neo4j_store, embedder.name
    service = MemoryService(store)
    for ep in ("e1", "e2", "e3"):
        episode(service, ntenant, ep)
    marchmont = service.write_facts(
        tenant_id=ntenant, deltas=[address("Marchmont Road", T0, "e1")]
    ).facts[0]
    assert pending_facts(store, ntenant, model) == 1
    store.search.index_pending(tenant_id=ntenant, embedder=embedder)
    first = vectors(driver, database, ntenant)
    assert set(first) == {marchmont.fact_id}
    assert first[marchmont.fact_id][0] is True

    # A later move cuts Marchmont Road's interval: a retired version and an open one, same
    # fact id. Only the new fact waits for a vector; the old one keeps its own as it was.
    harbour = service.write_facts(
        tenant_id=ntenant, deltas=[address("Harbour Street", T1, "e2")]
    ).facts[0]
    versions, _, _ = driver.execute_query(
        "MATCH ()-[r:FACT {tenant_id: $t, fact_id: $f}]->() "
        "RETURN count(*) AS n, count(r.embedding) AS carrying",
        t=ntenant,
        f=marchmont.fact_id,
        database_=database,
    )
    assert (versions[0]["n"], versions[0]["carrying"]) == (2, 0)
    assert pending_facts(store, ntenant, model) == 1
    assert store.search.index_pending(tenant_id=ntenant, embedder=embedder) == 1
    second = vectors(driver, database, ntenant)
    assert second[marchmont.fact_id] == first[marchmont.fact_id]
    assert second[harbour.fact_id][0] is True
    assert nearest(store, ntenant, embedder, "Marchmont Road", as_of=AT0)[0] == marchmont.fact_id

    # A correction from the same start replaces Marchmont Road whole: no version of it is
    # open any more, so the present no longer offers it, a past known_at still does.
    before = datetime.now(UTC)
    old_town = service.write_facts(
        tenant_id=ntenant,
        deltas=[address("Old Town", T0, "e3")],
        policy=ConflictPolicy.LATEST_RECORDED_WINS,
    ).facts[0]
    store.search.index_pending(tenant_id=ntenant, embedder=embedder)
    third = vectors(driver, database, ntenant)
    assert {f: live for f, (live, _) in third.items()} == {
        marchmont.fact_id: False,
        harbour.fact_id: True,
        old_town.fact_id: True,
    }
    assert marchmont.fact_id not in nearest(store, ntenant, embedder, "Marchmont Road", as_of=AT0)
    past = nearest(store, ntenant, embedder, "Marchmont Road", as_of=AT0, known_at=before)
    assert past[0] == marchmont.fact_id

    # Deleting the correction's episode: Old Town has no version left and loses its
    # vector; the re-fold brings Marchmont Road back under its id, live again.
    service.delete_episode(tenant_id=ntenant, episode_id="e3")
    fourth = vectors(driver, database, ntenant)
    assert {f: live for f, (live, _) in fourth.items()} == {
        marchmont.fact_id: True,
        harbour.fact_id: True,
    }
    assert nearest(store, ntenant, embedder, "Marchmont Road", as_of=AT0)[0] == marchmont.fact_id

    # Forgetting the entity takes every vector of its facts.
    forget(erasable(store), tenant_id=ntenant, entity_id="ada", dry_run=False)
    assert vectors(driver, database, ntenant) == {}


def test_a_purged_tenant_leaves_no_vector(
    neo4j_store: Store, ntenant: str, driver: Driver, database: str, embedder: SentenceEmbedder
) -> None:
    assert isinstance(neo4j_store, SearchableStore)
    service = MemoryService(neo4j_store)
    episode(service, ntenant, "e1")
    service.write_facts(tenant_id=ntenant, deltas=[address("Marchmont Road", T0, "e1")])
    neo4j_store.search.index_pending(tenant_id=ntenant, embedder=embedder)
    assert len(vectors(driver, database, ntenant)) == 1
    neo4j_store.purge_tenant(tenant_id=ntenant)
    assert vectors(driver, database, ntenant) == {}


def _to_version_vectors(driver: Driver, database: str, tenant: str) -> None:
    """What the previous code left: each of the tenant's versions carrying its fact's
    vector, indexed on the versions, and no FactVector node of the tenant."""
    for q in (
        "MATCH (v:FactVector {tenant_id: $t}) WHERE v.fact_id IS NOT NULL "
        "MATCH ()-[r:FACT {fact_id: v.fact_id}]->() WHERE r.tenant_id = $t "
        "SET r.embedding = v.embedding, r.embedding_model = v.embedding_model",
        "MATCH (v:FactVector {tenant_id: $t}) WHERE v.fact_id IS NOT NULL DELETE v",
        "DROP INDEX fact_vector IF EXISTS",
        "DROP CONSTRAINT fact_vector_id IF EXISTS",
        OLD_INDEX,
        "CALL db.awaitIndexes(300)",
    ):
        driver.execute_query(q, t=tenant, database_=database)


def test_versions_carrying_vectors_are_migrated_to_fact_vectors(
    neo4j_store: Store,
    ntenant: str,
    driver: Driver,
    database: str,
    embedder: SentenceEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from graph.stores.neo4j import search as neo4j_search

    assert isinstance(neo4j_store, SearchableStore)
    store = neo4j_store
    service = MemoryService(store)
    for ep in ("e1", "e2", "e3"):
        episode(service, ntenant, ep)
    service.write_facts(tenant_id=ntenant, deltas=[address("Marchmont Road", T0, "e1")])
    service.write_facts(tenant_id=ntenant, deltas=[address("Harbour Street", T1, "e2")])
    service.write_facts(
        tenant_id=ntenant,
        deltas=[address("Old Town", T0, "e3")],
        policy=ConflictPolicy.LATEST_RECORDED_WINS,
    )
    store.search.index_pending(tenant_id=ntenant, embedder=embedder)
    written = vectors(driver, database, ntenant)
    assert sorted(live for live, _ in written.values()) == [False, True, True]
    found = nearest(store, ntenant, embedder, "Harbour Street", as_of=AT1)
    _to_version_vectors(driver, database, ntenant)

    monkeypatch.setattr(neo4j_search, "_MOVE_BATCH", 3)  # several batches
    search: Any = store.search
    run, moves = search.conn.run, []

    def interrupted(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "search.move_fact_vectors":
            moves.append(name)
            if len(moves) == 2:
                raise TransientStoreError("connection lost")
        return run(name, *args, **kwargs)

    # A move cut short keeps the old index, so the next start takes the move up again.
    monkeypatch.setattr(search.conn, "run", interrupted)
    with pytest.raises(TransientStoreError):
        search.migrate()
    monkeypatch.setattr(search.conn, "run", run)
    assert search.migrate() is True
    assert vectors(driver, database, ntenant) == written
    (left,), _, _ = driver.execute_query(
        "MATCH ()-[r:FACT]->() WHERE r.embedding IS NOT NULL RETURN count(*) AS n",
        database_=database,
    )
    assert left["n"] == 0
    assert nearest(store, ntenant, embedder, "Harbour Street", as_of=AT1) == found
    assert pending_facts(store, ntenant, embedder.name) == 0
    assert search.migrate() is False


def test_a_pass_embeds_each_waiting_fact_once_in_small_batches(
    neo4j_store: Store, ntenant: str, driver: Driver, database: str, embedder: SentenceEmbedder
) -> None:
    """Seven facts written in one transaction share their recorded_at: the pass's cursor
    goes on by version id within it, batch after batch of two, skipping none."""
    assert isinstance(neo4j_store, SearchableStore)
    service = MemoryService(neo4j_store)
    episode(service, ntenant, "e1")
    written = service.write_facts(
        tenant_id=ntenant,
        deltas=[address(f"{i} Harbour Street", T0, "e1", f"person-{i}") for i in range(7)],
    ).facts
    assert len({f.recorded_at for f in written}) == 1
    counting = CountingEmbedder(embedder)
    neo4j_store.search.index_pending(tenant_id=ntenant, embedder=counting, batch_size=2)
    sentences = [t for t in counting.texts if "Harbour Street" in t]
    assert len(sentences) == len(set(sentences)) == 7
    assert set(vectors(driver, database, ntenant)) == {f.fact_id for f in written}
    assert pending_facts(neo4j_store, ntenant, embedder.name) == 0


def test_fact_vectors_filtered_by_three_properties_are_migrated_to_scope_keys(
    neo4j_store: Store,
    ntenant: str,
    driver: Driver,
    database: str,
    embedder: SentenceEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A store whose fact_vector filtered by tenant_id, live and embedding_model: the
    first search gives every FactVector its scope keys, batch by batch, and rebuilds
    fact_vector alone; the present and the past find what they found before."""
    from graph.stores.neo4j import search as neo4j_search

    assert isinstance(neo4j_store, SearchableStore)
    store = neo4j_store
    service = MemoryService(store)
    for ep in ("e1", "e2"):
        episode(service, ntenant, ep)
    first = service.write_facts(tenant_id=ntenant, deltas=[address("Marchmont Road", T0, "e1")])
    service.write_facts(
        tenant_id=ntenant,
        deltas=[address("Harbour Street", T0, "e2")],
        policy=ConflictPolicy.LATEST_RECORDED_WINS,
    )
    for i in range(5):  # more vectors than one batch
        service.write_facts(
            tenant_id=ntenant,
            deltas=[address(f"{i} Lighthouse Lane", T0, "e1", f"person-{i}")],
        )
    store.search.index_pending(tenant_id=ntenant, embedder=embedder)
    written = vectors(driver, database, ntenant)
    assert sorted(live for live, _ in written.values()) == [False] + [True] * 6
    present = nearest(store, ntenant, embedder, "Marchmont Road")
    past = nearest(store, ntenant, embedder, "Marchmont Road", known_at=first.facts[0].recorded_at)
    old_fact = first.facts[0].fact_id
    assert old_fact not in present
    assert past[0] == old_fact
    new_layout = _indexes(driver, database)
    assert new_layout["fact_vector"][0] == ["embedding", "live_scope", "scope"]

    for q in (
        "MATCH (v:FactVector {tenant_id: $t}) REMOVE v.scope, v.live_scope",
        "DROP INDEX fact_vector IF EXISTS",
        THREE_PROPERTY_INDEX,
        "CALL db.awaitIndexes(300)",
    ):
        driver.execute_query(q, t=ntenant, database_=database)
    assert _indexes(driver, database)["fact_vector"][0] == [
        "embedding",
        "embedding_model",
        "live",
        "tenant_id",
    ]

    monkeypatch.setattr(neo4j_search, "_BACKFILL_BATCH", 3)  # several batches
    search: Any = store.search
    run, ran = search.conn.run, []

    def spy(name: str, *args: Any, **kwargs: Any) -> Any:
        ran.append(name)
        return run(name, *args, **kwargs)

    monkeypatch.setattr(search.conn, "run", spy)
    assert search.migrate() is True
    backfills = ran.count("search.backfill_fact_vector_scopes")
    assert backfills == 4  # 7 vectors in batches of 3, then the empty batch
    drops = [name for name in ran if "drop" in name]
    assert drops == ["search.drop_fact_vector_index"]  # nothing else rebuilt
    assert "search.backfill_facts" not in ran  # the fulltext terms were not walked
    assert _indexes(driver, database) == new_layout
    assert vectors(driver, database, ntenant) == written
    assert nearest(store, ntenant, embedder, "Marchmont Road") == present
    assert (
        nearest(store, ntenant, embedder, "Marchmont Road", known_at=first.facts[0].recorded_at)
        == past
    )
    assert search.migrate() is False
