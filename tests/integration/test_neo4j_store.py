"""The Neo4j store against a real server: schema, the database-enforced invariant, exact
round trips, error translation, purge isolation."""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from datetime import UTC, datetime, timedelta

import neo4j
import pytest
from neo4j import Driver
from neo4j.exceptions import ConstraintError, ServiceUnavailable

from graph.errors import ConflictError, StoreUnavailableError, TransientStoreError
from graph.ledger import timeline_key
from graph.model import Cardinality, EpisodeCreate, FactQuery, MemoryDelta
from graph.port import Store
from graph.service import MemoryService
from graph.stores.neo4j.store import Neo4jStore
from graph.timeutil import utcnow
from tests.conftest import ROOT

pytestmark = pytest.mark.neo4j

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)

CONSTRAINTS = {
    "entity_id": ("NODE", ["Entity"], ["tenant_id", "entity_id"]),
    "episode_id": ("NODE", ["Episode"], ["tenant_id", "episode_id"]),
    "timeline_key": ("NODE", ["Timeline"], ["tenant_id", "key"]),
    "value_key": ("NODE", ["Value"], ["tenant_id", "value_key"]),
    "schema_version": ("NODE", ["Schema"], ["tenant_id", "version"]),
    "system_clock": ("NODE", ["SystemClock"], ["tenant_id"]),
    "fact_vector_id": ("NODE", ["FactVector"], ["tenant_id", "fact_id"]),
    "fact_version_id": ("RELATIONSHIP", ["FACT"], ["version_id"]),
    "fact_one_open": ("RELATIONSHIP", ["FACT"], ["open_key"]),
}
INDEXES = {
    "fact_predicate": ("RANGE", ["FACT"], ["tenant_id", "predicate"]),
    "fact_timeline": ("RANGE", ["FACT"], ["tenant_id", "timeline_key"]),
    "fact_source": ("RANGE", ["FACT"], ["tenant_id", "source_episode_id"]),
    "fact_recorded": ("RANGE", ["FACT"], ["tenant_id", "recorded_at"]),
    "fact_id": ("RANGE", ["FACT"], ["fact_id"]),
    "assertion_timeline": ("RANGE", ["Assertion"], ["tenant_id", "timeline_key"]),
    "assertion_episode": ("RANGE", ["Assertion"], ["tenant_id", "source_episode_id"]),
    "entity_text": ("FULLTEXT", ["Entity"], ["terms"]),
    "fact_text": ("FULLTEXT", ["FACT"], ["terms", "terms_current"]),
    "episode_text": ("FULLTEXT", ["Episode"], ["terms"]),
    "entity_embedding": ("VECTOR", ["Entity"], ["embedding", "tenant_id", "embedding_model"]),
    "episode_embedding": ("VECTOR", ["Episode"], ["embedding", "tenant_id", "embedding_model"]),
    "fact_vector": ("VECTOR", ["FactVector"], ["embedding", "scope", "live_scope"]),
}


def schema_state(driver: Driver, database: str) -> tuple[dict[str, tuple], dict[str, tuple]]:
    constraints, _, _ = driver.execute_query(
        "SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties",
        database_=database,
    )
    indexes, _, _ = driver.execute_query(
        "SHOW INDEXES YIELD name, type, labelsOrTypes, properties, state, options",
        database_=database,
    )
    c = {
        r["name"]: (r["entityType"], r["labelsOrTypes"], r["properties"], r["type"])
        for r in constraints
    }
    i = {
        r["name"]: (r["type"], r["labelsOrTypes"], r["properties"], r["state"], r["options"])
        for r in indexes
    }
    return c, i


def test_constraints_and_indexes_exist_after_init(
    neo4j_store: Store, driver: Driver, database: str
) -> None:
    constraints, indexes = schema_state(driver, database)
    for name, (entity, labels, props) in CONSTRAINTS.items():
        kind = "UNIQUENESS" if entity == "NODE" else "RELATIONSHIP_UNIQUENESS"
        assert constraints[name] == (entity, labels, props, kind), name
        assert indexes[name][3] == "ONLINE", name  # each constraint's backing index
    for name, (kind, labels, props) in INDEXES.items():
        assert indexes[name][:4] == (kind, labels, props, "ONLINE"), name
    vector = indexes["fact_vector"][4]["indexConfig"]
    assert vector["vector.dimensions"] == 384
    assert vector["vector.similarity_function"] == "COSINE"


def test_init_is_idempotent(neo4j_store: Store, driver: Driver, database: str) -> None:
    before = schema_state(driver, database)
    neo4j_store.init()
    neo4j_store.init()
    assert schema_state(driver, database) == before


def _create_fact(driver: Driver, database: str, tenant: str, key: str, open_row: bool) -> None:
    props = {
        "tenant_id": tenant,
        "version_id": "v_" + uuid.uuid4().hex,
        "fact_id": "f_" + uuid.uuid4().hex,
        "timeline_key": key,
        "predicate": "status",
    }
    if open_row:
        props["open_key"] = f"{tenant}|{key}"
    driver.execute_query(
        "MERGE (s:Entity {tenant_id: $tenant, entity_id: 'direct'})"
        " ON CREATE SET s.entity_type = 'Entity', s.name = 'direct'"
        " CREATE (s)-[r:FACT]->(s) SET r = $props",
        {"tenant": tenant, "props": props},
        database_=database,
    )


def test_the_database_refuses_a_second_open_row(
    driver: Driver, database: str, ntenant: str
) -> None:
    key = '["direct","status"]'
    _create_fact(driver, database, ntenant, key, open_row=True)
    # Closed or retired versions carry no open_key: any number of them may exist.
    _create_fact(driver, database, ntenant, key, open_row=False)
    _create_fact(driver, database, ntenant, key, open_row=False)
    with pytest.raises(ConstraintError):
        _create_fact(driver, database, ntenant, key, open_row=True)
    # Another timeline has its own slot.
    _create_fact(driver, database, ntenant, '["direct","tier"]', open_row=True)
    records, _, _ = driver.execute_query(
        "MATCH ()-[r:FACT {tenant_id: $t}]->() RETURN r.timeline_key AS k, count(*) AS n,"
        " count(r.open_key) AS open ORDER BY k",
        {"t": ntenant},
        database_=database,
    )
    assert [(r["k"], r["n"], r["open"]) for r in records] == [
        ('["direct","status"]', 3, 1),
        ('["direct","tier"]', 1, 1),
    ]


def test_a_second_open_row_through_the_store_is_a_conflict(
    neo4j_store: Store, nsvc: MemoryService, ntenant: str
) -> None:
    nsvc.add_episode(
        tenant_id=ntenant, body=EpisodeCreate(episode_id="e1", content="x", occurred_at=T0)
    )
    written = nsvc.write_facts(
        tenant_id=ntenant,
        deltas=[MemoryDelta(subject="m", predicate="status", value="A", source_episode_id="e1")],
    ).facts[0]
    key = timeline_key(
        subject="m", predicate="status", cardinality=Cardinality.ONE, value="A", obj=None
    )
    clash = written.model_copy(update={"version_id": "v_clash", "fact_id": "f_clash"})
    with pytest.raises(ConflictError) as e, neo4j_store.transaction() as tx:
        tx.insert(tenant_id=ntenant, facts=[clash], keys=[key])
    assert isinstance(e.value.__cause__, ConstraintError)
    # Rolled back: the timeline still holds exactly the one version written.
    assert [
        f.version_id for f in nsvc.history(tenant_id=ntenant, subject="m", predicate="status")
    ] == [written.version_id]


def test_equal_timestamps_round_trip_to_the_microsecond(
    neo4j_store: Store, nsvc: MemoryService, driver: Driver, database: str, ntenant: str
) -> None:
    nsvc.add_episode(
        tenant_id=ntenant, body=EpisodeCreate(episode_id="e1", content="x", occurred_at=T0)
    )
    later = T0 + timedelta(microseconds=1)
    facts = nsvc.write_facts(
        tenant_id=ntenant,
        deltas=[
            MemoryDelta(subject="m", predicate="a", value=1, valid_from=T0, source_episode_id="e1"),
            MemoryDelta(
                subject="m", predicate="b", value=2.5, valid_from=T0, source_episode_id="e1"
            ),
            MemoryDelta(
                subject="m",
                predicate="c",
                value=True,
                valid_from=later,
                valid_to=later + timedelta(microseconds=1),
                source_episode_id="e1",
            ),
        ],
    ).facts
    every = FactQuery(subject="m", as_of=None, known_at=utcnow())
    stored = {f.predicate: f for f in neo4j_store.facts(tenant_id=ntenant, query=every)}
    assert stored == {f.predicate: f for f in facts}  # every field, to the microsecond
    assert stored["a"].valid_from == stored["b"].valid_from == T0
    assert stored["a"].recorded_at == stored["c"].recorded_at  # one transaction, one instant
    assert stored["c"].valid_to - stored["c"].valid_from == timedelta(microseconds=1)
    assert (stored["a"].value, stored["b"].value, stored["c"].value) == (1, 2.5, True)
    # Native temporal values in the graph, in UTC.
    records, _, _ = driver.execute_query(
        "MATCH ()-[r:FACT {tenant_id: $t, predicate: 'a'}]->(v:Value)"
        " RETURN r.valid_from AS vf, v.value AS value, v.value_type AS type",
        {"t": ntenant},
        database_=database,
    )
    (row,) = records
    assert isinstance(row["vf"], neo4j.time.DateTime)
    assert row["vf"].to_native() == T0
    assert row["vf"].utcoffset() == timedelta(0)
    assert (row["value"], row["type"]) == (1, "number")


def test_entities_get_their_type_as_a_label(
    nsvc: MemoryService, driver: Driver, database: str, ntenant: str
) -> None:
    nsvc.add_episode(
        tenant_id=ntenant, body=EpisodeCreate(episode_id="e1", content="x", occurred_at=T0)
    )
    nsvc.write_facts(
        tenant_id=ntenant,
        deltas=[
            MemoryDelta(
                subject="c1",
                predicate="owns",
                object="a1",
                object_type="Account",
                source_episode_id="e1",
            )
        ],
    )
    nsvc.write_facts(
        tenant_id=ntenant,
        deltas=[
            MemoryDelta(
                subject="c1",
                subject_type="Customer",
                predicate="tier",
                value="gold",
                source_episode_id="e1",
            )
        ],
    )
    records, _, _ = driver.execute_query(
        "MATCH (e:Entity {tenant_id: $t}) WHERE e.entity_id IS NOT NULL"
        " RETURN e.entity_id AS id, labels(e) AS labels, e.entity_type AS type ORDER BY id",
        {"t": ntenant},
        database_=database,
    )
    assert [(r["id"], sorted(r["labels"]), r["type"]) for r in records] == [
        ("a1", ["Account", "Entity"], "Account"),
        ("c1", ["Customer", "Entity"], "Customer"),  # a generic Entity took its first type
    ]
    mentions, _, _ = driver.execute_query(
        "MATCH (:Episode {tenant_id: $t, episode_id: 'e1'})-[m:MENTIONS]->(e:Entity)"
        " RETURN e.entity_id AS id, m.tenant_id AS tenant ORDER BY id",
        {"t": ntenant},
        database_=database,
    )
    assert [(r["id"], r["tenant"]) for r in mentions] == [("a1", ntenant), ("c1", ntenant)]


def test_an_unreachable_server_is_store_unavailable() -> None:
    store = Neo4jStore.from_url("bolt://127.0.0.1:9")  # discard port: nothing listens
    try:
        with pytest.raises(StoreUnavailableError) as e:
            store.ping()
        assert isinstance(e.value.__cause__, ServiceUnavailable)
        with pytest.raises(StoreUnavailableError), store.transaction():
            pass
    finally:
        store.close()


def test_a_deadlock_becomes_a_transient_error(neo4j_store: Store, ntenant: str) -> None:
    """Two transactions lock two timelines in opposite orders (the ledger never does: it
    sorts); Neo4j detects the cycle, and the loser sees TransientStoreError, which the
    service retries."""
    both_hold_one = threading.Barrier(2, timeout=30)
    errors: list[BaseException] = []

    def worker(first: str, second: str) -> None:
        try:
            with neo4j_store.transaction() as tx:
                tx.lock_timelines(tenant_id=ntenant, keys=[first])
                both_hold_one.wait()
                tx.lock_timelines(tenant_id=ntenant, keys=[second])
        except BaseException as e:
            errors.append(e)

    # Create the timeline nodes first, so both transactions only lock existing nodes.
    with neo4j_store.transaction() as tx:
        tx.lock_timelines(tenant_id=ntenant, keys=["a", "b"])
    threads = [
        threading.Thread(target=worker, args=("a", "b")),
        threading.Thread(target=worker, args=("b", "a")),
    ]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert len(errors) == 1, errors
    assert isinstance(errors[0], TransientStoreError)
    assert isinstance(errors[0].__cause__, neo4j.exceptions.TransientError)


def test_purge_removes_one_tenant_only(
    neo4j_store: Store, nsvc: MemoryService, driver: Driver, database: str, ntenant: str
) -> None:
    other = "it-" + uuid.uuid4().hex[:12]
    try:
        for tenant in (ntenant, other):
            nsvc.add_episode(
                tenant_id=tenant, body=EpisodeCreate(episode_id="e1", content="x", occurred_at=T0)
            )
            nsvc.write_facts(
                tenant_id=tenant,
                deltas=[
                    MemoryDelta(
                        subject="c1", predicate="owns", object="a1", source_episode_id="e1"
                    ),
                    MemoryDelta(
                        subject="c1", predicate="tier", value="gold", source_episode_id="e1"
                    ),
                ],
            )
        neo4j_store.purge_tenant(tenant_id=ntenant)

        def count(tenant: str) -> tuple[int, int]:
            records, _, _ = driver.execute_query(
                "MATCH (n) WHERE n.tenant_id = $t WITH count(n) AS nodes"
                " OPTIONAL MATCH ()-[r]->() WHERE r.tenant_id = $t RETURN nodes, count(r) AS rels",
                {"t": tenant},
                database_=database,
            )
            return records[0]["nodes"], records[0]["rels"]

        assert count(ntenant) == (0, 0)
        nodes, rels = count(other)
        # 2 entities, 1 value, 1 episode, 2 assertions, 2 timelines, the tenant's system
        # clock; 2 facts, 2 mentions.
        assert (nodes, rels) == (9, 4)
        assert [f.object or f.value for f in nsvc.facts(tenant_id=other, subject="c1")] == [
            "a1",
            "gold",
        ]
    finally:
        neo4j_store.purge_tenant(tenant_id=other)


# -- settings: SGAM_NEO4J_USER / _PASSWORD / _DATABASE ---------------------------------------
def test_a_password_alone_connects_as_the_neo4j_user(
    neo4j_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It used to be ignored unless SGAM_NEO4J_USER was set too (the test server runs
    without authentication, so it accepts the credentials either way)."""
    monkeypatch.delenv("SGAM_NEO4J_USER", raising=False)
    monkeypatch.setenv("SGAM_NEO4J_PASSWORD", "s3cret")
    store = Neo4jStore.from_url(neo4j_uri)
    try:
        assert store.conn.user == "neo4j"
        store.init()
        store.ping()
        assert store.conn.driver.verify_authentication() is True
    finally:
        store.close()


def test_an_unknown_database_is_a_clear_store_error(
    neo4j_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SGAM_NEO4J_DATABASE", "nosuchdb")
    store = Neo4jStore.from_url(neo4j_uri)
    try:
        for attempt in (store.init, store.ping):
            with pytest.raises(StoreUnavailableError) as e:
                attempt()
            assert str(e.value).startswith("Neo4j has no database 'nosuchdb'")
            assert isinstance(e.value.__cause__, neo4j.exceptions.ClientError)
        no_db = pytest.raises(StoreUnavailableError, match="no database 'nosuchdb'")
        with no_db, store.transaction():
            pass
    finally:
        store.close()


def test_an_index_still_being_built_is_a_store_unavailable_error(
    neo4j_store: Store, driver: Driver, database: str
) -> None:
    """After an index is created or rebuilt (a migration), Neo4j refuses to search it
    until it is filled: a 503 to retry, not a 500. Shown with a scratch vector index over
    enough vectors that filling it takes a few seconds, queried at once."""
    assert isinstance(neo4j_store, Neo4jStore)
    label = "IndexWait" + uuid.uuid4().hex[:8]
    driver.execute_query(
        f"UNWIND range(1, 30000) AS i CREATE (:{label} {{e: [j IN range(1, 64) | rand()]}})",
        database_=database,
    )
    try:
        driver.execute_query(
            f"CREATE VECTOR INDEX {label} FOR (n:{label}) ON (n.e) OPTIONS {{indexConfig: "
            "{`vector.dimensions`: 64, `vector.similarity_function`: 'cosine'}}",
            database_=database,
        )
        not_ready = pytest.raises(StoreUnavailableError, match="still being built")
        with not_ready as e, neo4j_store.conn.translated():
            neo4j_store.conn.driver.execute_query(
                f"CYPHER 25 MATCH (n:{label}) SEARCH n IN (VECTOR INDEX {label} FOR $q"
                " LIMIT 5) SCORE AS s RETURN count(*) AS n",
                q=[0.5] * 64,
                database_=database,
            )
        assert isinstance(e.value.__cause__, neo4j.exceptions.ClientError)
        assert e.value.__cause__.gql_status == "51N63"
    finally:
        driver.execute_query("CALL db.awaitIndexes(600)", database_=database)
        driver.execute_query(f"DROP INDEX {label} IF EXISTS", database_=database)
        with driver.session(database=database) as session:  # IN TRANSACTIONS: auto-commit
            session.run(
                f"MATCH (n:{label}) CALL (n) {{ DELETE n }} IN TRANSACTIONS OF 10000 ROWS"
            ).consume()


@pytest.mark.parametrize(
    "command",
    [
        "from api.server import serve\nfrom api.settings import Settings\n"
        "serve(Settings(store_url=sys.argv[1], port=0))\n",
        "from extraction import ExtractionSettings, run_worker\n"
        "sys.exit(run_worker(ExtractionSettings(), store_url=sys.argv[1], count=1))\n",
    ],
    ids=["serve", "worker"],
)
def test_an_unknown_database_stops_the_server_and_worker_with_one_line(
    neo4j_uri: str, command: str
) -> None:
    out = subprocess.run(
        [sys.executable, "-c", "import sys\n" + command, neo4j_uri],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT),
            "SGAM_NEO4J_DATABASE": "nosuchdb",
            "HF_HUB_OFFLINE": "1",
        },
    )
    assert out.returncode in (1, 2), out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "cannot open the store" in lines[0]
    assert "Neo4j has no database 'nosuchdb'" in lines[0]
