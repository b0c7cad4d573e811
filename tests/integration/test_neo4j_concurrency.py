"""Concurrent writers on shared timelines serialise on the Timeline lock nodes.

8 threads x 200 conflicting, out-of-order deltas on a few shared timelines, through one
Neo4jStore: afterwards every timeline satisfies the invariant at every system time, is
exactly what its ledger folds to, and holds every write that was accepted.
"""

from __future__ import annotations

import random
import threading
from collections import defaultdict
from datetime import UTC, datetime, timedelta

import pytest
from neo4j import Driver

from graph.errors import FactConflictError
from graph.ledger import interval_of, key_of
from graph.model import ConflictPolicy, EpisodeCreate, Fact, MemoryDelta
from graph.port import Store
from graph.service import MemoryService
from graph.stores.neo4j.codec import fact_from_props, from_neo
from graph.temporal import Interval, check_invariants, fold

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

WRITERS = 8
DELTAS_PER_WRITER = 200
SUBJECTS = ("acct-1", "acct-2")
PREDICATES = ("status", "tier")  # 2 x 2 = 4 shared single-valued timelines
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def random_delta(rng: random.Random, episode: str) -> MemoryDelta:
    # Few distinct starts, so equal valid_from conflicts are frequent; arrival order is
    # random, so most deltas arrive "late" relative to some later interval.
    start = T0 + timedelta(days=rng.randrange(12))
    end = start + timedelta(days=rng.randrange(1, 4)) if rng.random() < 0.3 else None
    return MemoryDelta(
        subject=rng.choice(SUBJECTS),
        predicate=rng.choice(PREDICATES),
        value=rng.choice(("open", "frozen", "closed", "gold", "silver")),
        valid_from=start,
        valid_to=end,
        source_episode_id=episode,
    )


def writer(
    svc: MemoryService,
    tenant: str,
    n: int,
    accepted: list[Fact],
    rejected: list[int],
    failures: list[BaseException],
) -> None:
    rng = random.Random(n)
    try:
        for i in range(DELTAS_PER_WRITER):
            episode = f"w{n}-e{i % 10}"
            policy = rng.choice((ConflictPolicy.LATEST_RECORDED_WINS, ConflictPolicy.REJECT))
            try:
                result = svc.write_facts(
                    tenant_id=tenant, deltas=[random_delta(rng, episode)], policy=policy
                )
            except FactConflictError:
                rejected.append(i)
                continue
            accepted.extend(result.facts)
    except BaseException as e:  # collected: a thread's failure must fail the test
        failures.append(e)


def versions(driver: Driver, database: str, tenant: str) -> dict[str, list[Fact]]:
    records, _, _ = driver.execute_query(
        "MATCH ()-[r:FACT {tenant_id: $t}]->() WHERE r.predicate IS NOT NULL"
        " RETURN properties(r) AS p",
        {"t": tenant},
        database_=database,
    )
    out: dict[str, list[Fact]] = defaultdict(list)
    for r in records:
        out[r["p"]["timeline_key"]].append(fact_from_props(r["p"]))
    return out


def live_at(facts: list[Fact], k: datetime) -> list[Interval]:
    return [
        interval_of(f)
        for f in facts
        if f.recorded_at <= k and (f.retired_at is None or f.retired_at > k)
    ]


def test_concurrent_conflicting_writers_keep_every_timeline_consistent(
    neo4j_store: Store, driver: Driver, database: str, ntenant: str
) -> None:
    svc = MemoryService(neo4j_store)
    for n in range(WRITERS):
        for e in range(10):
            svc.add_episode(
                tenant_id=ntenant,
                body=EpisodeCreate(episode_id=f"w{n}-e{e}", content=f"{n}/{e}", occurred_at=T0),
            )
    accepted: list[Fact] = []
    rejected: list[int] = []
    failures: list[BaseException] = []
    threads = [
        threading.Thread(target=writer, args=(svc, ntenant, n, accepted, rejected, failures))
        for n in range(WRITERS)
    ]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=900)
    assert not failures, failures
    assert len(accepted) + len(rejected) == WRITERS * DELTAS_PER_WRITER
    assert rejected, "the random history should contain reject-policy conflicts"

    by_key = versions(driver, database, ntenant)
    assert len(by_key) == len(SUBJECTS) * len(PREDICATES)
    for key, facts in by_key.items():
        current = [f for f in facts if f.retired_at is None]
        # The database's view of the invariant: one open_key at most, on the open row.
        assert sum(1 for f in current if f.valid_to is None) <= 1, key
        check_invariants([interval_of(f) for f in current])
        # ... and at every earlier system time, too.
        for k in sorted({f.recorded_at for f in facts}):
            check_invariants(live_at(facts, k))
        # The current state is exactly what the timeline's ledger folds to.
        with neo4j_store.transaction() as tx:
            ledger = tx.assertions(tenant_id=ntenant, keys=[key])[key]
        assert sorted(fold(ledger), key=lambda i: i.valid_from) == sorted(
            (interval_of(f) for f in current), key=lambda i: i.valid_from
        ), key

    # Every accepted write is in the store, as the very version the writer was given
    # (retired since, perhaps, by a later writer: then only retired_at differs).
    stored = {f.version_id: f for fs in by_key.values() for f in fs}
    for f in accepted:
        version = stored.get(f.version_id)
        assert version is not None, f
        assert version.model_copy(update={"retired_at": None}) == f
        assert version.retired_at is None or version.retired_at > f.recorded_at
        assert key_of(f) in by_key

    # The open_key property sits exactly on the current open versions.
    records, _, _ = driver.execute_query(
        "MATCH ()-[r:FACT {tenant_id: $t}]->() WHERE r.open_key IS NOT NULL"
        " RETURN r.open_key AS k, r.retired_at AS retired, r.valid_to AS valid_to",
        {"t": ntenant},
        database_=database,
    )
    assert all(from_neo(r["retired"]) is None and r["valid_to"] is None for r in records)
    open_rows = sorted(r["k"] for r in records)
    assert open_rows == sorted(
        f"{ntenant}|{k}"
        for k, fs in by_key.items()
        if any(f.retired_at is None and f.valid_to is None for f in fs)
    )
