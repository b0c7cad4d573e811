"""Write throughput of the Neo4j store, beside the raw driver (not part of the test run).

In each run, on a fresh tenant of the Neo4j at ``--uri``:

- store     ``--facts`` facts written through MemoryService → Neo4jStore in batches of
            ``--batch`` (one transaction each: validation, timeline locks, the temporal
            core, versions, ledger entries, entities, mentions). Half the facts are
            relations to new Account entities, half literals (a status) on the same
            customers, so both edge kinds and the shared Value nodes are exercised.
- raw       the very same FACT relationships (each batch's versions, as the store
            returned them), created by the raw driver in one transaction per batch with
            ``UNWIND $rows ... CREATE`` (the same properties as the store's, from the same
            rows; the Cypher is below) between nodes that already exist: the physical limit
            of the server for these writes. Raw writes only the FACT relationships; the
            store also creates the entities, the timeline lock nodes, one ledger entry
            (Assertion node) and one MENTIONS relationship per fact, and reads the schema,
            the episodes, the entities and the timelines' current versions first.

Store and raw batches alternate, so both see the same load on a shared machine.

Reports facts/s of each as the median of ``--runs`` runs, and store/raw. ``--phases``
also splits the store's time over all runs: each template's round trips, the commits, and
the rest (Python: validation, the temporal core, building the parameters), with this
process's CPU time beside it.

    NEO4J_URI=bolt://... .venv/bin/python bench/neo4j_write.py [--runs 3] [--facts 20000]
        [--batch 1000] [--phases]

Credentials and database as the store takes them: SGAM_NEO4J_USER, SGAM_NEO4J_PASSWORD,
SGAM_NEO4J_DATABASE.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neo4j import GraphDatabase  # noqa: E402

from graph.ledger import key_of, ordered_id  # noqa: E402
from graph.model import EpisodeCreate, Fact, MemoryDelta  # noqa: E402
from graph.service import MemoryService  # noqa: E402
from graph.stores.neo4j.codec import fact_row, value_key  # noqa: E402
from graph.stores.neo4j.connection import auth_from_env, database_from_env  # noqa: E402
from graph.stores.neo4j.store import Neo4jStore  # noqa: E402

T0 = datetime(2025, 1, 1, tzinfo=UTC)
STATUSES = ("gold", "silver", "bronze", "frozen", "closed")

RAW_ENTITIES = """
UNWIND $ids AS id
CREATE (:Entity {tenant_id: $tenant, entity_id: id, entity_type: 'Entity', name: id})
"""
RAW_VALUES = """
UNWIND $rows AS row
MERGE (v:Value {tenant_id: $tenant, value_key: row.value_key})
  ON CREATE SET v.value = row.value, v.value_type = row.value_type
"""
# The relationships the store creates, property for property (cypher/_fact_version_set.cypher
# and the insert blocks of cypher/ledger_write_batch.cypher), as a plain script would:
# "raw" is the cost of creating these relationships, without the ledger around them.
_RAW_SET = """
SET r.version_id = row.version_id, r.fact_id = row.fact_id, r.tenant_id = $tenant_id,
    r.timeline_key = row.timeline_key, r.subject = row.subject_id,
    r.subject_type = row.subject_type, r.predicate = row.predicate,
    r.value_json = row.value_json, r.value_type = row.value_type, r.object = row.object_id,
    r.object_type = row.object_type, r.valid_from = datetime(row.valid_from),
    r.valid_to = datetime(row.valid_to), r.recorded_at = datetime(row.recorded_at),
    r.retired_at = datetime(row.retired_at), r.source_episode_id = row.source_episode_id,
    r.sources = row.sources, r.supersedes = row.supersedes, r.confidence = row.confidence,
    r.memory_type = row.memory_type, r.schema_version = row.schema_version,
    r.retention_policy = row.retention_policy, r.cardinality = row.cardinality,
    r.fact_text = row.fact_text, r.open_key = row.open_key, r.current = row.retired_at IS NULL,
    r.terms = row.terms, r.terms_current = row.terms_current
"""
RAW_RELATIONS = (
    """
UNWIND $rows AS row
MATCH (s:Entity {tenant_id: $tenant_id, entity_id: row.subject_id})
MATCH (o:Entity {tenant_id: $tenant_id, entity_id: row.object_id})
CREATE (s)-[r:FACT]->(o)
"""
    + _RAW_SET
)
RAW_LITERALS = (
    """
UNWIND $rows AS row
MATCH (s:Entity {tenant_id: $tenant_id, entity_id: row.subject_id})
MATCH (v:Value {tenant_id: $tenant_id, value_key: row.value_key})
CREATE (s)-[r:FACT]->(v)
"""
    + _RAW_SET
)


def batch_deltas(start: int, size: int) -> list[MemoryDelta]:
    """``size`` facts: customer i owns account i, and customer i has a status."""
    out: list[MemoryDelta] = []
    for i in range(start, start + size // 2):
        common: dict[str, Any] = {"subject": f"cust-{i}", "source_episode_id": "ep-bench"}
        common["valid_from"] = T0 + timedelta(minutes=i)
        out.append(
            MemoryDelta(
                subject_type="Customer",
                predicate="owns",
                object=f"acct-{i}",
                object_type="Account",
                **common,
            )
        )
        out.append(MemoryDelta(predicate="status", value=STATUSES[i % len(STATUSES)], **common))
    return out


def raw_rows(facts: list[Fact], tenant: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    relations, literals = [], []
    for f in facts:
        # Version ids are unique across the database: the copy gets its own, of the same
        # time-ordered form as the store's (random ones cost the index more).
        f = f.model_copy(update={"tenant_id": tenant, "version_id": ordered_id("v")})
        # The store's own row shape (times as text, datetime() in Cypher): the same encoding.
        row = fact_row(f, tenant_id=tenant, key=key_of(f))
        if f.object is not None:
            relations.append(row)
        else:
            literals.append({**row, "value_key": value_key(f)})
    return relations, literals


class Phases:
    """Wall time of each template the store runs and of the commits (``--phases``)."""

    def __init__(self, store: Neo4jStore) -> None:
        self.wall: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.on = False  # counting only inside the timed writes
        run, transaction = store.conn.run, store.conn.transaction

        def timed_run(name: str, params: Any, **kw: Any) -> Any:
            started = time.perf_counter()
            try:
                return run(name, params, **kw)
            finally:
                if self.on:
                    self.wall[name] += time.perf_counter() - started
                    self.calls[name] += 1

        @contextmanager
        def timed_transaction() -> Iterator[Any]:
            with transaction() as tx:
                yield tx
                # Leaving the block commits: what is left of it is the commit.
                self._commit_started = time.perf_counter()
            if self.on:
                self.wall["COMMIT"] += time.perf_counter() - self._commit_started
                self.calls["COMMIT"] += 1

        store.conn.run = timed_run  # type: ignore[method-assign]
        store.conn.transaction = timed_transaction  # type: ignore[method-assign]
        self._commit_started = 0.0

    def report(self, store_s: float, cpu_s: float) -> None:
        parts = self.wall
        print(f"store phases over all runs ({store_s:.2f} s; this process's CPU {cpu_s:.2f} s):")
        for name, secs in sorted(parts.items(), key=lambda kv: -kv[1]):
            share = 100 * secs / store_s
            print(f"  {name:30s} {secs:7.2f} s  {share:5.1f} %  ({self.calls[name]} calls)")
        rest = store_s - sum(parts.values())
        print(f"  {'Python, outside the driver':30s} {rest:7.2f} s  {100 * rest / store_s:5.1f} %")


def raw_batch(driver: Any, database: str, tenant: str, facts: list[Fact]) -> float:
    """The same relationships in one raw transaction; their end nodes are made untimed."""
    relations, literals = raw_rows(facts, tenant)
    entities = sorted({f.subject for f in facts} | {f.object for f in facts if f.object})
    values = {
        value_key(f): {
            "value_key": value_key(f),
            "value": f.value,
            "value_type": f.value_type.value,
        }
        for f in facts
        if f.object is None
    }
    driver.execute_query(RAW_ENTITIES, {"tenant": tenant, "ids": entities}, database_=database)
    driver.execute_query(
        RAW_VALUES, {"tenant": tenant, "rows": list(values.values())}, database_=database
    )
    started = time.perf_counter()
    with driver.session(database=database) as session, session.begin_transaction() as tx:
        tx.run(RAW_RELATIONS, {"tenant_id": tenant, "rows": relations}).consume()
        tx.run(RAW_LITERALS, {"tenant_id": tenant, "rows": literals}).consume()
        tx.commit()
    return time.perf_counter() - started


def one_run(
    store: Neo4jStore,
    driver: Any,
    database: str,
    facts: int,
    batch: int,
    phases: Phases | None = None,
) -> tuple[float, float, float]:
    """Seconds for the store and for the raw driver, and this process's CPU seconds in the
    store. Batches alternate between the two, so both see the same load on a shared
    machine."""
    tenant, raw_tenant = (f"bench-{uuid.uuid4().hex[:8]}" for _ in range(2))
    svc = MemoryService(store)
    svc.add_episode(
        tenant_id=tenant,
        body=EpisodeCreate(episode_id="ep-bench", content="bench", occurred_at=T0),
    )
    store_s = raw_s = cpu_s = 0.0
    try:
        for start in range(0, facts // 2, batch // 2):
            deltas = batch_deltas(start, batch)
            if phases is not None:
                phases.on = True
            started, cpu = time.perf_counter(), time.process_time()
            written = svc.write_facts(tenant_id=tenant, deltas=deltas).facts
            store_s += time.perf_counter() - started
            cpu_s += time.process_time() - cpu
            if phases is not None:
                phases.on = False
            assert len({f.version_id for f in written}) == len(deltas)
            raw_s += raw_batch(driver, database, raw_tenant, written)
    finally:
        store.purge_tenant(tenant_id=tenant)
        store.purge_tenant(tenant_id=raw_tenant)
    return store_s, raw_s, cpu_s


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--uri", default=os.environ.get("NEO4J_URI"))
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--facts", type=int, default=20000)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--phases", action="store_true", help="split the store's time (see above)")
    args = p.parse_args()
    if not args.uri:
        p.error("give --uri or set NEO4J_URI (e.g. from: bash tools/neo4j/neo4j.sh up)")
    store = Neo4jStore.from_url(args.uri)
    store.init()
    database = database_from_env()
    # The same credentials as the store (SGAM_NEO4J_USER / SGAM_NEO4J_PASSWORD).
    driver = GraphDatabase.driver(args.uri, auth=auth_from_env(), notifications_min_severity="OFF")
    phases = Phases(store) if args.phases else None
    store_rates: list[float] = []
    raw_rates: list[float] = []
    store_total = cpu_total = 0.0
    try:
        for run in range(1, args.runs + 1):
            elapsed, raw, cpu = one_run(store, driver, database, args.facts, args.batch, phases)
            store_total += elapsed
            cpu_total += cpu
            store_rates.append(args.facts / elapsed)
            raw_rates.append(args.facts / raw)
            print(
                f"run {run}: store {store_rates[-1]:8.0f} facts/s   raw {raw_rates[-1]:8.0f}"
                f" facts/s   store/raw {store_rates[-1] / raw_rates[-1]:.2f}",
                flush=True,
            )
    finally:
        driver.close()
        store.close()
    s, r = statistics.median(store_rates), statistics.median(raw_rates)
    ratio = statistics.median(a / b for a, b in zip(store_rates, raw_rates, strict=True))
    print(
        f"median of {args.runs} runs, {args.facts} facts in batches of {args.batch}:"
        f" store {s:.0f} facts/s, raw UNWIND CREATE {r:.0f} facts/s,"
        f" store/raw {ratio:.2f} (median of the runs' ratios)"
    )
    if phases is not None:
        phases.report(store_total, cpu_total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
