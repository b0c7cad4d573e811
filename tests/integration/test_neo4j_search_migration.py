"""A Neo4j store written before the tenant-prefixed fulltext terms is migrated on first
search: every item gets its terms, the old scope properties go, only the fulltext indexes
are rebuilt, and search finds what it found before."""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import Driver

from graph.model import EpisodeCreate, MemoryDelta
from graph.port import Store
from graph.retrieval import ItemKind, Retriever, SearchableStore
from graph.service import MemoryService

pytestmark = pytest.mark.neo4j

SINCE = "2026-01-01T00:00:00Z"
LATER = "2026-02-01T00:00:00Z"

# The fulltext indexes as the previous layout defined them (standard analyzer, a scope
# token every query required).
OLD_INDEXES = [
    "CREATE FULLTEXT INDEX entity_text FOR (e:Entity) ON EACH [e.name, e.aliases, e.scope]",
    "CREATE FULLTEXT INDEX fact_text FOR ()-[r:FACT]-() "
    "ON EACH [r.fact_text, r.scope, r.scope_current]",
    "CREATE FULLTEXT INDEX episode_text FOR (e:Episode) ON EACH [e.content_text, e.scope]",
]


def _indexes(driver: Driver, database: str) -> dict[str, Any]:
    rows, _, _ = driver.execute_query(
        "SHOW INDEXES YIELD name, type, properties, options "
        "WHERE type IN ['FULLTEXT', 'VECTOR'] RETURN name, properties, options",
        database_=database,
    )
    return {r["name"]: (sorted(r["properties"]), r["options"]["indexConfig"]) for r in rows}


def _fact_terms(driver: Driver, database: str, tenant: str) -> dict[str, Any]:
    """Per tenant: versions without terms or with a scope left, with current terms, all;
    and the terms themselves."""
    (row,), _, _ = driver.execute_query(
        "MATCH ()-[r:FACT {tenant_id: $t}]->() "
        "RETURN count(CASE WHEN r.terms IS NULL OR r.scope IS NOT NULL THEN 1 END) AS bad, "
        "count(r.terms_current) AS open, count(r) AS all, "
        "collect([r.version_id, r.terms, r.terms_current]) AS terms",
        t=tenant,
        database_=database,
    )
    out = dict(row)
    out["terms"] = sorted(map(tuple, out["terms"]))
    return out


def _to_old_layout(driver: Driver, database: str, tenant: str) -> None:
    """What the previous code left: scope tokens, no terms, the old fulltext indexes."""
    scope = "t" + tenant.replace("_", "_u").replace("-", "_h")
    for q in (
        "MATCH ()-[r:FACT {tenant_id: $t}]->() REMOVE r.terms, r.terms_current "
        "SET r.scope = $scope, r.scope_current = CASE WHEN r.current THEN $scope END",
        "MATCH (e:Entity {tenant_id: $t}) REMOVE e.terms SET e.scope = $scope",
        "MATCH (e:Episode {tenant_id: $t}) REMOVE e.terms SET e.scope = $scope",
        "DROP INDEX entity_text IF EXISTS",
        "DROP INDEX fact_text IF EXISTS",
        "DROP INDEX episode_text IF EXISTS",
        *OLD_INDEXES,
        "CALL db.awaitIndexes(300)",
    ):
        driver.execute_query(q, t=tenant, scope=scope, database_=database)


def test_an_old_store_is_migrated_on_first_search(
    neo4j_store: Store, ntenant: str, driver: Driver, database: str
) -> None:
    assert isinstance(neo4j_store, SearchableStore)
    service = MemoryService(neo4j_store)
    service.add_episode(
        tenant_id=ntenant,
        body=EpisodeCreate.model_validate(
            {
                "episode_id": "e1",
                "kind": "message",
                "occurred_at": SINCE,
                "content": "Ada moved to the lighthouse on Harbour Street",
            }
        ),
    )
    first = service.write_facts(
        tenant_id=ntenant,
        deltas=[
            MemoryDelta(
                subject="ada",
                subject_type="Person",
                predicate="address",
                value="Marchmont Road",
                valid_from=SINCE,
                source_episode_id="e1",
            )
        ],
    )
    second = service.write_facts(
        tenant_id=ntenant,
        deltas=[
            MemoryDelta(
                subject="ada",
                subject_type="Person",
                predicate="address",
                value="Harbour Street",
                valid_from=LATER,
                source_episode_id="e1",
            )
        ],
    )
    assert neo4j_store.queue.add_entity_alias(
        tenant_id=ntenant, entity_id="ada", alias="Countess Lovelace"
    )
    new_layout = _indexes(driver, database)
    written = _fact_terms(driver, database, ntenant)
    assert written["bad"] == 0
    assert 0 < written["open"] < written["all"]  # a closed version is among them
    _to_old_layout(driver, database, ntenant)
    vectors_before = {k: v for k, v in _indexes(driver, database).items() if "embedding" in k}

    search: Any = neo4j_store.search
    assert search.migrate() is True

    assert _indexes(driver, database) == new_layout
    # The vector indexes were not rebuilt: same definitions, and they were never dropped
    # (a rebuild of a large store's vectors takes long).
    assert {k: v for k, v in new_layout.items() if "embedding" in k} == vectors_before
    assert _fact_terms(driver, database, ntenant) == written

    window = Retriever.window()
    facts = search.fulltext(
        tenant_id=ntenant, kind=ItemKind.FACT, terms=["harbour"], window=window, limit=5
    )
    assert [h.item_id for h in facts] == [second.facts[0].fact_id]
    # The present does not offer the closed version; a past known_at does.
    assert (
        search.fulltext(
            tenant_id=ntenant, kind=ItemKind.FACT, terms=["marchmont"], window=window, limit=5
        )
        == []
    )
    past = Retriever.window(known_at=first.facts[0].recorded_at)
    assert [
        h.item_id
        for h in search.fulltext(
            tenant_id=ntenant, kind=ItemKind.FACT, terms=["marchmont"], window=past, limit=5
        )
    ] == [first.facts[0].fact_id]
    entities = search.fulltext(
        tenant_id=ntenant, kind=ItemKind.ENTITY, terms=["lovelace"], window=window, limit=5
    )
    assert [h.item_id for h in entities] == ["ada"]
    episodes = search.fulltext(
        tenant_id=ntenant, kind=ItemKind.EPISODE, terms=["lighthouse"], window=window, limit=5
    )
    assert [h.item_id for h in episodes] == ["e1"]

    assert search.migrate() is False  # nothing left to do


def _node_terms(driver: Driver, database: str, tenants: list[str]) -> list[tuple[Any, ...]]:
    rows, _, _ = driver.execute_query(
        "MATCH (e) WHERE (e:Entity OR e:Episode) AND e.tenant_id IN $ts "
        "RETURN e.tenant_id AS t, coalesce(e.entity_id, e.episode_id) AS id, "
        "e:Entity AS entity, e.terms AS terms, e.scope AS scope",
        ts=tenants,
        database_=database,
    )
    return sorted((r["t"], r["id"], r["entity"], r["terms"], r["scope"]) for r in rows)


def test_the_migration_walks_each_tenants_nodes_a_batch_at_a_time(
    neo4j_store: Store,
    ntenant: str,
    driver: Driver,
    database: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from graph.stores.neo4j import search as neo4j_search

    twin = f"{ntenant}-twin"
    service = MemoryService(neo4j_store)
    for tenant in (ntenant, twin):
        for i in range(5):
            service.add_episode(
                tenant_id=tenant,
                body=EpisodeCreate.model_validate(
                    {"episode_id": f"e{i}", "occurred_at": SINCE, "content": f"{tenant} visit {i}"}
                ),
            )
        service.write_facts(
            tenant_id=tenant,
            deltas=[
                MemoryDelta(
                    subject=f"person-{i}",
                    subject_type="Person",
                    predicate="city",
                    value=f"{tenant} town {i}",
                    valid_from=SINCE,
                    source_episode_id=f"e{i}",
                )
                for i in range(5)
            ],
        )
    written = _node_terms(driver, database, [ntenant, twin])
    assert len(written) == 20  # 5 entities and 5 episodes a tenant
    assert all(terms and scope is None for *_, terms, scope in written)
    _to_old_layout(driver, database, ntenant)
    _to_old_layout(driver, database, twin)
    assert all(terms is None for *_, terms, _ in _node_terms(driver, database, [ntenant, twin]))

    # batches of 2: each tenant's 5 entities and 5 episodes take three batches each
    monkeypatch.setattr(neo4j_search, "_BACKFILL_BATCH", 2)
    search: Any = neo4j_store.search
    assert search.migrate() is True
    # every node has the terms the write path gave it, its own tenant's, and no scope
    assert _node_terms(driver, database, [ntenant, twin]) == written


# The vector indexes as sgam created them before turning quantization off: Neo4j's
# default, binary quantization.
QUANTIZED_INDEXES = [
    "CYPHER 25 CREATE VECTOR INDEX entity_embedding FOR (e:Entity) ON (e.embedding) "
    "WITH [e.tenant_id, e.embedding_model] "
    "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}",
    "CYPHER 25 CREATE VECTOR INDEX episode_embedding FOR (e:Episode) ON (e.embedding) "
    "WITH [e.tenant_id, e.embedding_model] "
    "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}",
    "CYPHER 25 CREATE VECTOR INDEX fact_vector FOR (v:FactVector) ON (v.embedding) "
    "WITH [v.tenant_id, v.live, v.embedding_model] "
    "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}",
]
VECTOR_INDEXES = ("entity_embedding", "episode_embedding", "fact_vector")


def _quantization(config: dict[str, Any]) -> str:
    """What an index config says of quantization, whichever key its provider uses."""
    if "vector.quantization.type" in config:
        return str(config["vector.quantization.type"]).upper()
    return "BINARY" if config.get("vector.quantization.enabled", False) else "NONE"


def test_quantized_vector_indexes_are_built_again_without_quantization(
    neo4j_store: Store, ntenant: str, driver: Driver, database: str
) -> None:
    from graph.embeddings import default_embedder

    assert isinstance(neo4j_store, SearchableStore)
    service = MemoryService(neo4j_store)
    service.add_episode(
        tenant_id=ntenant,
        body=EpisodeCreate.model_validate(
            {"episode_id": "e1", "occurred_at": SINCE, "content": "Ada moved to the lighthouse"}
        ),
    )
    written = service.write_facts(
        tenant_id=ntenant,
        deltas=[
            MemoryDelta(
                subject="ada",
                subject_type="Person",
                predicate="address",
                value="Harbour Street",
                valid_from=SINCE,
                source_episode_id="e1",
            )
        ],
    )
    embedder = default_embedder()
    assert Retriever(neo4j_store, embedder=embedder).ensure_indexed(ntenant) == 3
    new_layout = _indexes(driver, database)
    assert {_quantization(new_layout[name][1]) for name in VECTOR_INDEXES} == {"NONE"}

    for name in VECTOR_INDEXES:
        driver.execute_query(f"DROP INDEX {name}", database_=database)
    for ddl in QUANTIZED_INDEXES:
        driver.execute_query(ddl, database_=database)
    driver.execute_query("CALL db.awaitIndexes(300)", database_=database)
    old = _indexes(driver, database)
    assert {_quantization(old[name][1]) for name in VECTOR_INDEXES} == {"BINARY"}
    fulltext_before = {k: v for k, v in old.items() if k not in VECTOR_INDEXES}

    search: Any = neo4j_store.search
    assert search.migrate() is True
    assert _indexes(driver, database) == new_layout
    # Only the vector indexes were rebuilt; the fulltext ones were left as they were.
    assert {k: v for k, v in new_layout.items() if k not in VECTOR_INDEXES} == fulltext_before
    # Rebuilt from the vectors the nodes kept: nothing to embed again, every item found.
    assert Retriever(neo4j_store, embedder=embedder).ensure_indexed(ntenant) == 0
    window = Retriever.window()
    found = {
        kind: [
            h.item_id
            for h in search.vector_search(
                tenant_id=ntenant,
                kind=kind,
                vector=embedder.encode([text])[0],
                model=embedder.name,
                window=window,
                limit=5,
            )
        ]
        for kind, text in (
            (ItemKind.FACT, "ada address Harbour Street"),
            (ItemKind.ENTITY, "ada"),
            (ItemKind.EPISODE, "Ada moved to the lighthouse"),
        )
    }
    assert found == {
        ItemKind.FACT: [written.facts[0].fact_id],
        ItemKind.ENTITY: ["ada"],
        ItemKind.EPISODE: ["e1"],
    }
    assert search.migrate() is False  # nothing left to do
