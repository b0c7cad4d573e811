"""Tenant filters of erasure and retention (graph/stores/sqlite/erasure.py, the Cypher
``erase_*`` and ``retention_*`` templates): two tenants hold the *same* episode,
candidate, timeline and (restored) fact ids with other values; forgetting or purging in
one deletes exactly its own, and the twin still answers everything it had.

A twin that shares no id with the tenant lets a dropped tenant filter go unseen (a query
that matches ``entity_id = ?`` alone finds nothing of the twin's to break), hence the
same ids everywhere; the restored twin (an export of the tenant restored into it) shares
even the fact ids, which only a restore can make equal. tests/mutants/tenant_filters.py
removes the filters one by one and runs these.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from graph.erasure import ErasableStore, forget
from graph.errors import NotFoundError
from graph.model import EpisodeCreate, MemoryDelta
from graph.port import Store
from graph.queue import HoldReason, MergeCandidate, PendingCandidate
from graph.retention import PurgeResult, purge_tenant
from graph.schema import MemorySchema
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore
from graph.stores.transfer import RECORD_ORDER, TransferStore
from graph.timeutil import format_instant, from_db, utcnow
from tests.conformance.test_tenant_isolation import delta, seed, snapshot, t


@pytest.fixture
def twin(store: Store, tenant: str) -> Iterator[str]:
    other = "w-" + uuid.uuid4().hex[:12]
    yield other
    store.purge_tenant(tenant_id=other)


def export(store: Store, tenant: str) -> list[dict[str, Any]]:
    """Every record of the tenant (versions, ledger, episodes, mentions, entities)."""
    transfer = cast(TransferStore, store)
    rows = [r for k in RECORD_ORDER for r in transfer.export_records(tenant_id=tenant, kind=k)]
    return sorted(rows, key=str)


def restore_copy(store: Store, source: str, target: str, records: list[dict[str, Any]]) -> None:
    """``source``'s export into ``target``: the same fact ids, version ids of its own."""
    for kind in RECORD_ORDER:
        rows = [r for r in records if r["type"] == kind]
        if kind == "version":
            rows = [{**r, "version_id": r["version_id"] + "t"} for r in rows]
        cast(TransferStore, store).restore_records(tenant_id=target, records=rows)


def episode(svc: MemoryService, tenant: str, eid: str, at: datetime) -> None:
    svc.add_episode(
        tenant_id=tenant,
        body=EpisodeCreate(
            episode_id=eid, content=f"{tenant} {eid}", occurred_at=at, session_id="s1"
        ),
    )


def held(tenant: str, cid: str, ep: str, subject: str) -> PendingCandidate:
    return PendingCandidate(
        tenant_id=tenant,
        candidate_id=cid,
        episode_id=ep,
        statement_key=f"k-{cid}",
        reason=HoldReason.SUPPORT,
        created_at=utcnow(),
        delta=delta(subject, "status", ep, t(0), value="held"),
    )


def merge(tenant: str, cid: str, ep: str, existing: str) -> MergeCandidate:
    return MergeCandidate(
        tenant_id=tenant,
        candidate_id=cid,
        entity_id=f"{existing}-{cid}",
        name=existing,
        entity_type="Person",
        existing_entity_id=existing,
        similarity=0.9,
        episode_id=ep,
        created_at=utcnow(),
    )


def review(store: Store, tenant: str) -> tuple[list[Any], list[Any]]:
    """The tenant's review candidates and merge candidates, as (id, episode, subject)."""
    q = store.queue
    cands = q.candidates(tenant_id=tenant, status=None, episode_id=None, limit=50)
    merges = q.merge_candidates(tenant_id=tenant, status=None, limit=50)
    return (
        sorted((c.candidate_id, c.episode_id, c.delta.subject) for c in cands),
        sorted((m.candidate_id, m.episode_id, m.existing_entity_id) for m in merges),
    )


def unused_values(store: Store, tenant: str) -> int:
    """Neo4j: the tenant's literal value nodes no version points at (forgetting deletes
    those it leaves unused; locking a value node creates it if missing). SQLite has none."""
    driver = getattr(getattr(store, "conn", None), "driver", None)
    if driver is None or isinstance(store, SqliteStore):
        return 0
    found = driver.execute_query(
        "MATCH (v:Value {tenant_id: $t}) WHERE NOT EXISTS { ()-[:FACT]->(v) } RETURN count(v) AS n",
        {"t": tenant},
    )
    return int(found.records[0]["n"])


def test_forget_deletes_the_tenant_s_own_by_ids_the_twin_holds_too(
    store: Store, service: MemoryService, tenant: str, twin: str
) -> None:
    """The twin's e3 and e4 speak of mira (as subject, as object), the tenant's of zoe
    alone: forgetting mira in the tenant keeps its e3 and e4. The twin's candidates name
    mira where the tenant's same candidate ids do not, and the other way round."""
    assert isinstance(store, ErasableStore)
    q = store.queue
    for x, tag in ((twin, "b"), (tenant, "a")):
        seed(service, x, tag)
        episode(service, x, "e3", t(1))
        episode(service, x, "e4", t(1.5))
    service.write_facts(
        tenant_id=twin,
        deltas=[
            delta("mira", "mood", "e3", t(1), value="b-happy"),
            delta("zoe", "knows", "e4", t(1.5), object="mira", object_type="Person"),
        ],
    )
    service.write_facts(
        tenant_id=tenant,
        deltas=[
            delta("zoe", "mood", "e3", t(1), value="a-calm"),
            delta("zoe", "knows", "e4", t(1.5), object="ivan", object_type="Person"),
        ],
    )
    # c1/m1: the twin's name mira (in e1), the tenant's zoe (in e3), which stay; c2/m2:
    # the other way round, the tenant's go.
    q.hold_candidate(candidate=held(twin, "c1", "e1", "mira"))
    q.hold_candidate(candidate=held(twin, "c2", "e3", "zoe"))
    q.add_merge_candidates(
        candidates=[merge(twin, "m1", "e1", "mira"), merge(twin, "m2", "e3", "zoe")]
    )
    q.hold_candidate(candidate=held(tenant, "c1", "e3", "zoe"))
    q.hold_candidate(candidate=held(tenant, "c2", "e1", "mira"))
    q.add_merge_candidates(
        candidates=[merge(tenant, "m1", "e3", "zoe"), merge(tenant, "m2", "e1", "mira")]
    )
    twin_before = (export(store, twin), snapshot(service, twin), review(store, twin))
    zoe_before = service.history(tenant_id=tenant, subject="zoe", predicate="mood")

    gone = forget(store, tenant_id=tenant, entity_id="mira", dry_run=False)

    assert (gone.entities, gone.episodes, gone.candidates) == (1, 2, 2)
    # The tenant: e1 and e2 (they mention mira) went, e3 and e4 (zoe's) stay.
    for eid, kept in (("e1", False), ("e2", False), ("e3", True), ("e4", True)):
        try:
            service.get_episode(tenant_id=tenant, episode_id=eid)
            assert kept, eid
        except NotFoundError:
            assert not kept, eid
    assert service.history(tenant_id=tenant, subject="zoe", predicate="mood") == zoe_before
    assert [
        f.object for f in service.facts(tenant_id=tenant, subject="zoe", predicate="knows")
    ] == ["ivan"]
    assert service.facts(tenant_id=tenant, subject="mira") == []
    assert review(store, tenant) == ([("c1", "e3", "zoe")], [("m1", "e3", "zoe")])
    # Nothing of the twin's mira was locked in the tenant (no value node of the twin's
    # values made in it).
    assert unused_values(store, tenant) == 0
    # The twin: every record, read and candidate as it was.
    assert (export(store, twin), snapshot(service, twin), review(store, twin)) == twin_before
    assert [f.value for f in service.facts(tenant_id=twin, subject="mira", predicate="mood")] == [
        "b-happy"
    ]


def test_forget_counts_the_tenant_s_own_facts_beside_a_restored_twin(
    store: Store, service: MemoryService, tenant: str, twin: str
) -> None:
    """A restored twin holds the tenant's very fact ids and ledger entries (timeline key
    and seq): a fact gone from the tenant is gone, though the twin still holds one of that
    id, and the tenant's retraction (an entry of no episode, which forgetting deletes
    by key and seq) goes without the twin's."""
    assert isinstance(store, ErasableStore)
    seed(service, tenant, "a")
    nick = service.facts(tenant_id=tenant, subject="mira", predicate="nickname")[0]
    service.retract(tenant_id=tenant, fact_id=nick.fact_id, valid_to=t(3))
    restore_copy(store, tenant, twin, export(store, tenant))
    twin_before = export(store, twin)

    def fact_ids(x: str) -> set[str]:
        return {
            f.fact_id
            for p in ("status", "city", "nickname", "holds_account")
            for f in service.history(tenant_id=x, subject="mira", predicate=p)
        }

    mira = fact_ids(tenant)
    assert fact_ids(twin) == mira
    preview = forget(store, tenant_id=tenant, entity_id="mira", dry_run=True)
    assert (preview.facts, preview.entities, preview.episodes) == (len(mira), 1, 2)
    assert preview.versions >= len(mira)
    gone = forget(store, tenant_id=tenant, entity_id="mira", dry_run=False)
    assert gone == preview.model_copy(update={"dry_run": False})
    assert export(store, twin) == twin_before
    assert fact_ids(tenant) == set()
    assert fact_ids(twin) == mira


def test_forget_deletes_only_episodes_that_exist_in_the_tenant(
    store: Store, service: MemoryService, tenant: str, twin: str
) -> None:
    """A version of the tenant may still cite an episode it deleted before (a fact that
    e1 stated and e3 restated); the twin's e1, same id, is no episode of the tenant's."""
    assert isinstance(store, ErasableStore)
    for x in (twin, tenant):
        episode(service, x, "e1", t(0))
        service.write_facts(
            tenant_id=x,
            deltas=[delta("mira", "city", "e1", t(0), value=f"{x}-paris", subject_type="Person")],
        )
    episode(service, tenant, "e3", t(1))
    service.write_facts(
        tenant_id=tenant, deltas=[delta("mira", "city", "e3", t(0), value=f"{tenant}-paris")]
    )
    service.delete_episode(tenant_id=tenant, episode_id="e1")
    # What makes this test: a version (retired) still cites e1, which only the twin holds.
    cited = {r["source_episode_id"] for r in export(store, tenant) if r["type"] == "version"}
    assert cited == {"e1", "e3"}
    twin_before = export(store, twin)
    gone = forget(store, tenant_id=tenant, entity_id="mira", dry_run=False)
    assert (gone.entities, gone.episodes) == (1, 1)  # e3
    assert export(store, twin) == twin_before


def d(month: int, day: int = 1) -> datetime:
    return datetime(2026, month, day, tzinfo=UTC)


RETAIN = MemorySchema.model_validate(
    {"predicates": [{"name": "note", "value_type": "string", "retention": "P30D"}]}
)
RETAIN_EPISODES = RETAIN.model_copy(update={"episode_retention": "P30D"})


def note(
    svc: MemoryService,
    tenant: str,
    value: str,
    start: datetime,
    eid: str,
    end: datetime | None = None,
) -> None:
    episode(svc, tenant, eid, start)
    svc.write_facts(
        tenant_id=tenant,
        deltas=[
            MemoryDelta(
                subject="mira",
                predicate="note",
                value=value,
                valid_from=start,
                valid_to=end,
                source_episode_id=eid,
            )
        ],
    )


def notes(svc: MemoryService, tenant: str) -> list[tuple[object, datetime, datetime | None]]:
    return [
        (f.value, f.valid_from, f.valid_to)
        for f in svc.history(tenant_id=tenant, subject="mira", predicate="note")
    ]


def test_retention_purges_the_tenant_s_own_beside_a_restored_twin(
    store: Store, service: MemoryService, tenant: str, twin: str
) -> None:
    """The twin holds the tenant's timelines, fact ids and expired versions (restored from
    it), and episodes of its own under ids the tenant holds with other dates: the
    tenant's purge deletes the tenant's, and the twin keeps every record."""
    assert isinstance(store, ErasableStore)
    service.put_schema(tenant_id=tenant, schema=RETAIN)
    # x is written ending in March, then cut in February by y, which inherits x's end: a
    # version of x retired in system time with its validity ended, x's current version and
    # y's, all ended before April (the cutoff of a purge on May 1).
    note(service, tenant, "x", d(1), "e1", end=d(3))
    note(service, tenant, "y", d(2), "e2")
    note(service, tenant, "z", d(6), "e3")
    restore_copy(store, tenant, twin, export(store, tenant))
    episode(service, twin, "late", d(1))  # the twin's is old, the tenant's is not
    episode(service, tenant, "late", d(6))
    twin_before = export(store, twin)
    assert notes(service, twin) == notes(service, tenant)

    done = purge_tenant(store, tenant_id=tenant, schema=RETAIN, now=d(5))
    assert done == PurgeResult(
        tenant_id=tenant, dry_run=False, facts=2, versions=3, assertions=2, episodes=0
    )
    assert [v for v, _, _ in notes(service, tenant)] == ["z"]
    assert export(store, twin) == twin_before

    # Episodes before March 2 (30 days before April 1): the tenant's e1 and e2; its "late"
    # is of June, the twin's "late" of January.
    done = purge_tenant(store, tenant_id=tenant, schema=RETAIN_EPISODES, now=d(4))
    assert done.episodes == 2
    for eid, kept in (("e1", False), ("e2", False), ("e3", True), ("late", True)):
        try:
            service.get_episode(tenant_id=tenant, episode_id=eid)
            assert kept, eid
        except NotFoundError:
            assert not kept, eid
    assert export(store, twin) == twin_before


# zoe's advisor is single-valued: one timeline ["zoe","advisor"] whatever the advisor, so
# a fact about mira sits on a timeline that is not mira's own.
ADVISOR = MemorySchema.model_validate(
    {
        "entity_types": [{"name": "Person"}],
        "predicates": [{"name": "advisor", "object_type": "Person", "cardinality": "one"}],
    }
)


def test_forget_re_folds_a_shared_timeline_at_the_tenant_s_own_clock(
    store: Store, service: MemoryService, tenant: str, twin: str
) -> None:
    """zoe's advisor is ivan, then mira from March. The tenant holds them restored without
    mentions and without mira's episode (as an import may), so forgetting mira deletes no
    episode and re-folds the timeline itself, after reading its current versions: ivan's
    version is recorded anew, at the tenant's clock. The twin holds the same timeline
    (fact ids of its own) restored from a ledger fifty years ahead; its versions never
    move the tenant's clock (a read of current versions without the tenant would)."""
    assert isinstance(store, ErasableStore)
    ahead = timedelta(days=365 * 50)

    def written() -> list[dict[str, Any]]:
        """The timeline's export from a tenant of its own: fact ids of its own."""
        source = "s-" + uuid.uuid4().hex[:12]
        try:
            service.put_schema(tenant_id=source, schema=ADVISOR)
            for who, start, eid in (("ivan", d(1), "e1"), ("mira", d(3), "e2")):
                episode(service, source, eid, start)
                service.write_facts(
                    tenant_id=source,
                    deltas=[
                        MemoryDelta(
                            subject="zoe",
                            predicate="advisor",
                            object=who,
                            object_type="Person",
                            valid_from=start,
                            source_episode_id=eid,
                        )
                    ],
                )
            return export(store, source)
        finally:
            store.purge_tenant(tenant_id=source)

    def shifted(r: dict[str, Any]) -> dict[str, Any]:
        if r["type"] not in ("version", "assertion"):
            return r
        return {
            **r,
            **{
                k: format_instant(from_db(r[k]) + ahead)
                for k in ("recorded_at", "retired_at")
                if r.get(k)
            },
        }

    # mira's episode is not restored: forgetting deletes only episodes that still exist.
    restore_copy(
        store,
        "",
        tenant,
        [
            r
            for r in written()
            if r["type"] != "mention" and not (r["type"] == "episode" and r["episode_id"] == "e2")
        ],
    )
    restore_copy(store, "", twin, [shifted(r) for r in written()])
    twin_before = export(store, twin)
    far = utcnow() + ahead - timedelta(days=1)
    never = utcnow() + 2 * ahead  # known at: every version, even one recorded ahead
    twin_history = service.history(
        tenant_id=twin, subject="zoe", predicate="advisor", known_at=never
    )
    assert twin_history
    assert all(f.recorded_at > far for f in twin_history)

    gone = forget(store, tenant_id=tenant, entity_id="mira", dry_run=False)
    assert (gone.entities, gone.episodes) == (1, 0)
    # The wall clock: the process clock (utcnow) would have jumped with a wrong answer.
    soon = datetime.now(UTC) + timedelta(minutes=1)
    history = service.history(tenant_id=tenant, subject="zoe", predicate="advisor", known_at=never)
    current = [f for f in history if f.retired_at is None]
    assert [(f.object, f.valid_from, f.valid_to) for f in current] == [("ivan", d(1), None)]
    assert current[0].recorded_at < soon
    assert all(f.object == "ivan" for f in history)
    assert all(f.retired_at is None or f.retired_at < soon for f in history)
    assert export(store, twin) == twin_before
