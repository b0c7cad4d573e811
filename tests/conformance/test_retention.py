"""Retention on both stores, with a controllable clock: the purge pass takes ``now``.

A predicate's ``retention`` (an ISO-8601 duration) hard-deletes the versions whose
validity ended longer ago than that; the schema's ``episode_retention`` deletes old
episodes as episode deletion does. Nothing else may change: what a purged fact's ledger
entries still decide about other facts keeps it until those have ended too.
"""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from graph.errors import NotFoundError
from graph.model import EpisodeCreate, MemoryDelta
from graph.retention import Purger, PurgeResult, purge, purge_tenant
from graph.schema import MemorySchema
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore


def d(month: int, day: int = 1, year: int = 2026) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


SCHEMA = MemorySchema.model_validate(
    {
        "predicates": [
            {"name": "note", "value_type": "string", "retention": "P30D"},
            {"name": "status", "value_type": "string"},  # keep
            {"name": "badge", "value_type": "string", "retention": "seven_years"},  # a label
        ]
    }
)


def ep(svc: MemoryService, tenant: str, eid: str, at: datetime) -> None:
    svc.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id=eid, content=eid, occurred_at=at)
    )


def put(
    svc: MemoryService,
    tenant: str,
    predicate: str,
    value: str,
    start: datetime,
    eid: str,
    end: datetime | None = None,
) -> str:
    ep(svc, tenant, eid, start)
    delta = MemoryDelta(
        subject="mira",
        predicate=predicate,
        value=value,
        valid_from=start,
        valid_to=end,
        source_episode_id=eid,
    )
    return svc.write_facts(tenant_id=tenant, deltas=[delta]).facts[0].fact_id


def history(svc: MemoryService, tenant: str, predicate: str) -> list[tuple[object, datetime]]:
    return [
        (f.value, f.valid_from)
        for f in svc.history(tenant_id=tenant, subject="mira", predicate=predicate)
    ]


def run(svc: MemoryService, tenant: str, now: datetime, dry: bool = False) -> PurgeResult:
    return purge_tenant(svc.store, tenant_id=tenant, schema=SCHEMA, now=now, dry_run=dry)


def test_versions_ended_longer_ago_than_the_retention_are_deleted(
    service: MemoryService, tenant: str
) -> None:
    service.put_schema(tenant_id=tenant, schema=SCHEMA)
    put(service, tenant, "note", "a", d(1), "e1", end=d(2))
    put(service, tenant, "note", "b", d(3), "e2")
    put(service, tenant, "status", "gold", d(1), "e3", end=d(1, 15))
    put(service, tenant, "badge", "x", d(1), "e4", end=d(1, 10))

    # 30 days after a's end it is still kept (ended 2026-02-01; cutoff 2026-01-31).
    assert run(service, tenant, now=d(3, 3)) == PurgeResult(tenant_id=tenant, dry_run=False)
    assert history(service, tenant, "note") == [("a", d(1)), ("b", d(3))]

    preview = run(service, tenant, now=d(3, 15), dry=True)
    assert preview == PurgeResult(
        tenant_id=tenant, dry_run=True, facts=1, versions=1, assertions=1, episodes=0
    )
    assert history(service, tenant, "note") == [("a", d(1)), ("b", d(3))]  # dry: unchanged

    done = run(service, tenant, now=d(3, 15))
    assert done == preview.model_copy(update={"dry_run": False})
    assert history(service, tenant, "note") == [("b", d(3))]
    # keep and a label keep everything, however old.
    assert history(service, tenant, "status") == [("gold", d(1))]
    assert history(service, tenant, "badge") == [("x", d(1))]
    # Gone at every system time: a read as known before the purge has no "a" either.
    old = service.facts(
        tenant_id=tenant,
        subject="mira",
        predicate="note",
        as_of=d(1, 15),
        known_at=d(12, 31, year=2099),
    )
    assert old == []
    assert run(service, tenant, now=d(3, 15)) == PurgeResult(tenant_id=tenant, dry_run=False)


def test_a_purged_fact_never_comes_back_in_a_later_repair(
    service: MemoryService, tenant: str
) -> None:
    """x is cut by y; x's ledger entries go with it, so deleting y's episode later (which
    folds the timeline again) does not bring x back."""
    service.put_schema(tenant_id=tenant, schema=SCHEMA)
    put(service, tenant, "note", "x", d(1), "ex")
    put(service, tenant, "note", "y", d(2), "ey")  # x now ends 2026-02-01
    result = run(service, tenant, now=d(6))
    assert (result.facts, result.versions) == (1, 2)  # x: its open and its cut version
    assert history(service, tenant, "note") == [("y", d(2))]
    service.delete_episode(tenant_id=tenant, episode_id="ey")
    assert history(service, tenant, "note") == []


def test_a_fact_other_facts_depend_on_stays_until_they_end(
    service: MemoryService, tenant: str
) -> None:
    """A bounded write cut p into [Jan 1, Jan 10) and a piece resuming on Jan 20 (open):
    p's assertion still produces that piece, so p cannot go while the piece is believed."""
    service.put_schema(tenant_id=tenant, schema=SCHEMA)
    put(service, tenant, "note", "p", d(1), "ep")
    put(service, tenant, "note", "q", d(1, 10), "eq", end=d(1, 20))
    before = history(service, tenant, "note")
    assert [v for v, _ in before] == ["p", "q", "p"]
    # Neither goes: without p's entry a repair would lose the piece; without q's, p
    # would grow back over q's portion.
    assert run(service, tenant, now=d(6)) == PurgeResult(tenant_id=tenant, dry_run=False)
    assert history(service, tenant, "note") == before
    # Once the piece has ended too, the whole timeline can go.
    put(service, tenant, "note", "r", d(2), "er")  # cuts the piece at Feb 1
    result = run(service, tenant, now=d(6))
    assert result.facts == 3
    assert history(service, tenant, "note") == [("r", d(2))]
    service.delete_episode(tenant_id=tenant, episode_id="er")
    assert history(service, tenant, "note") == []


class PlanWatched:
    """A SQLite store whose plan read checks, as it starts, that nobody holds the file's
    writer lock: another connection takes it at once, without waiting."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        self.plans: list[list[str]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def expired_timelines(self, **kw: Any) -> list[str]:
        other = sqlite3.connect(self.store.path, timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")  # "database is locked" if a writer holds it
            other.execute("ROLLBACK")
        finally:
            other.close()
        keys = self.store.expired_timelines(**kw)
        self.plans.append(keys)
        return keys


@pytest.mark.parametrize("dry", [False, True], ids=["purge", "dry-run"])
def test_a_purge_plans_outside_the_sqlite_writer_lock(
    sqlite_store: SqliteStore, tenant: str, dry: bool
) -> None:
    """The plan scans the tenant's versions of every predicate with a retention (seconds
    on a large tenant). On SQLite every tenant's writes wait for the one writer lock, so
    the plan reads a snapshot instead of holding it, in a dry run too; each batch then
    re-reads its timelines under their locks."""
    svc = MemoryService(sqlite_store)
    svc.put_schema(tenant_id=tenant, schema=SCHEMA)
    put(svc, tenant, "note", "a", d(1), "e1", end=d(2))
    put(svc, tenant, "note", "b", d(3), "e2")
    watched = PlanWatched(sqlite_store)
    done = purge_tenant(watched, tenant_id=tenant, schema=SCHEMA, now=d(3, 15), dry_run=dry)  # type: ignore[arg-type]
    assert len(watched.plans) == 1  # one predicate with a duration ("note")
    (keys,) = watched.plans
    assert len(keys) == 1
    assert (done.facts, done.versions, done.assertions, done.dry_run) == (1, 1, 1, dry)
    kept = [("a", d(1)), ("b", d(3))] if dry else [("b", d(3))]
    assert history(svc, tenant, "note") == kept


def test_old_episodes_go_as_episode_deletion_does(service: MemoryService, tenant: str) -> None:
    schema = SCHEMA.model_copy(update={"episode_retention": "P90D"})
    service.put_schema(tenant_id=tenant, schema=schema)
    put(service, tenant, "status", "silver", d(10, 1, year=2025), "e-old")
    put(service, tenant, "status", "gold", d(3), "e-new")
    assert history(service, tenant, "status") == [("silver", d(10, 1, year=2025)), ("gold", d(3))]
    preview = purge_tenant(
        service.store, tenant_id=tenant, schema=schema, now=d(3, 15), dry_run=True
    )
    assert (preview.episodes, preview.facts) == (1, 1)
    service.get_episode(tenant_id=tenant, episode_id="e-old")  # the dry run deleted nothing
    done = purge_tenant(service.store, tenant_id=tenant, schema=schema, now=d(3, 15))
    assert done == preview.model_copy(update={"dry_run": False})
    with pytest.raises(NotFoundError):
        service.get_episode(tenant_id=tenant, episode_id="e-old")
    assert history(service, tenant, "status") == [("gold", d(3))]
    service.get_episode(tenant_id=tenant, episode_id="e-new")


def test_the_purger_runs_every_tenant_with_its_clock(service: MemoryService, tenant: str) -> None:
    service.put_schema(tenant_id=tenant, schema=SCHEMA)
    put(service, tenant, "note", "a", d(1), "e1", end=d(2))
    results = purge(
        service.store,
        schema_of=lambda t: service.schema(tenant_id=t),
        now=d(1, 20),
        tenant_id=tenant,
    )
    assert [r.versions for r in results] == [0]  # not ended yet at that clock
    purger = Purger(
        service.store,
        schema_of=lambda t: service.schema(tenant_id=t) if t == tenant else None,
        interval=0.05,
        clock=lambda: d(6),
    ).start()
    try:
        deadline = time.monotonic() + 60
        while history(service, tenant, "note") and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        purger.stop()
    assert history(service, tenant, "note") == []
    assert purger.passes >= 1
