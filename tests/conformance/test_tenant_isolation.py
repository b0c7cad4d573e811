"""Tenant filters, query by query: two tenants hold the *same* ids (episodes, entities,
sessions, candidates) with different values, and every read and write of one is checked
to answer and touch exactly its own.

Each test is aimed at queries whose tenant filter no other test notices when it is
removed; tests/mutants/tenant_filters.py removes the filters one by one and runs these.
The twin (``twin``) is written first, so that a query that forgot its tenant meets the
twin's rows on the way: its timelines, its older queue entries, its lower document ids.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from graph.embeddings import SentenceEmbedder, default_embedder
from graph.errors import LeaseLostError, NotFoundError, ValidationError
from graph.model import Direction, EpisodeCreate, EpisodeStatus, MemoryDelta
from graph.port import Store
from graph.queue import (
    CandidateStatus,
    HoldReason,
    MergeCandidate,
    MergeStatus,
    PendingCandidate,
)
from graph.retrieval import ItemKind, Retriever, SearchableStore
from graph.retrieval.port import Window
from graph.schema import MemorySchema
from graph.service import MemoryService
from graph.stores.transfer import RECORD_ORDER, TransferStore
from graph.timeutil import format_instant, from_db, utcnow

T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)
LATER = T0 + timedelta(days=2)


def t(days: float) -> datetime:
    return T0 + timedelta(days=days)


@pytest.fixture
def twin(store: Store, tenant: str) -> Iterator[str]:
    other = "w-" + uuid.uuid4().hex[:12]
    yield other
    store.purge_tenant(tenant_id=other)


@pytest.fixture
def early(store: Store, tenant: str) -> Iterator[str]:
    """A twin whose id sorts before every test tenant's ("t-"): first in a table read in
    tenant order, and (written first) in row order too."""
    other = "0-" + uuid.uuid4().hex[:12]
    yield other
    store.purge_tenant(tenant_id=other)


def delta(subject: str, predicate: str, ep: str, at: datetime, **kw: Any) -> MemoryDelta:
    return MemoryDelta.model_validate(
        {
            "subject": subject,
            "predicate": predicate,
            "source_episode_id": ep,
            "valid_from": at,
            **kw,
        }
    )


def seed(svc: MemoryService, tenant: str, tag: str, *, extra: bool = False) -> None:
    """The same ids in every tenant; values carry ``tag``. ``extra``: an entity of its own."""
    for eid, at in (("e1", t(0)), ("e2", LATER)):
        _, created = svc.add_episode(
            tenant_id=tenant,
            body=EpisodeCreate(
                episode_id=eid, content=f"{tag} says hello", occurred_at=at, session_id="s1"
            ),
        )
        assert created, (tenant, eid)  # the twin's e1 does not make this one a redelivery
    e1 = [
        delta("mira", "status", "e1", t(0), value=f"{tag}-gold", subject_type="Person"),
        delta("mira", "city", "e1", t(0), value="paris"),  # the same statement in both
        delta("mira", "nickname", "e1", t(0), value=f"{tag}-nick"),
        delta("mira", "holds_account", "e1", t(0), object="acct", object_type="Account"),
    ]
    if extra:
        e1.append(delta("mira", "knows", "e1", t(0), object=f"{tag}-only", object_type="Person"))
    svc.write_facts(tenant_id=tenant, deltas=e1)
    svc.write_facts(
        tenant_id=tenant, deltas=[delta("mira", "status", "e2", LATER, value=f"{tag}-silver")]
    )


def snapshot(svc: MemoryService, tenant: str) -> list[Any]:
    """Everything of a tenant a read can show, at every valid time."""
    out: list[Any] = []
    for p in ("status", "city", "nickname", "holds_account", "knows"):
        out.append(
            [
                (
                    f.fact_id,
                    f.value,
                    f.object,
                    f.valid_from,
                    f.valid_to,
                    f.source_episode_id,
                    f.retired_at,
                )
                for f in svc.history(tenant_id=tenant, subject="mira", predicate=p)
            ]
        )
    for eid in ("e1", "e2"):
        try:
            ep = svc.get_episode(tenant_id=tenant, episode_id=eid)
            out.append(ep.model_dump())
        except NotFoundError:
            out.append((eid, None))
    return out


def values(facts: list[Any]) -> list[Any]:
    return sorted(str(f.value if f.value is not None else f.object) for f in facts)


def test_reads_answer_only_the_tenant_s_own_rows(
    service: MemoryService, tenant: str, twin: str
) -> None:
    seed(service, twin, "b", extra=True)
    seed(service, tenant, "a")
    for x, tag in ((tenant, "a"), (twin, "b")):
        own = [f"{tag}-gold", f"{tag}-nick", "acct", "paris"]
        if x == twin:
            own.append("b-only")
        assert values(service.facts(tenant_id=x, subject="mira", as_of=t(1))) == sorted(own)
        assert values(service.facts(tenant_id=x, predicate="status")) == [f"{tag}-silver"]
        assert values(service.facts(tenant_id=x, predicate="status", as_of=t(1))) == [f"{tag}-gold"]
        assert values(service.facts(tenant_id=x, object="acct")) == ["acct"]
        assert len(service.facts(tenant_id=x)) == len(own)  # the whole tenant
        assert [
            (f.value, f.valid_from, f.valid_to, f.source_episode_id)
            for f in service.history(tenant_id=x, subject="mira", predicate="status")
        ] == [(f"{tag}-gold", t(0), LATER, "e1"), (f"{tag}-silver", LATER, None, "e2")]
        assert values(service.episode_facts(tenant_id=x, episode_id="e1")) == sorted(own)
        names, _ = service.predicates(tenant_id=x, subject="mira")
        expected = ["city", "holds_account", "nickname", "status"]
        assert names == sorted([*expected, "knows"] if x == twin else expected)
        entity, facts = service.entity(tenant_id=x, entity_id="mira", as_of=t(1))
        assert entity.tenant_id == x
        assert values(facts) == sorted(own)
        _, incoming = service.entity(tenant_id=x, entity_id="acct", as_of=t(1))
        assert [(f.subject, f.tenant_id) for f in incoming] == [("mira", x)]
        hood = service.neighbors(
            tenant_id=x, entity_id="mira", as_of=t(1), direction=Direction.BOTH, depth=2
        )
        dumped = hood.model_dump_json()
        assert ("b-only" in dumped) == (x == twin)
        assert (tenant in dumped, twin in dumped) == (x == tenant, x == twin)
        assert service.get_episode(tenant_id=x, episode_id="e1").content == f"{tag} says hello"


def test_writes_touch_only_the_tenant_s_own_rows(
    service: MemoryService, tenant: str, twin: str
) -> None:
    seed(service, twin, "b")
    seed(service, tenant, "a")
    before = snapshot(service, twin)
    a_city = service.facts(tenant_id=tenant, subject="mira", predicate="city")[0]
    b_city = service.facts(tenant_id=twin, subject="mira", predicate="city")[0]
    # A fact id of one tenant is unknown in the other.
    with pytest.raises(NotFoundError):
        service.retract(tenant_id=twin, fact_id=a_city.fact_id, valid_to=t(5))
    service.retract(tenant_id=tenant, fact_id=a_city.fact_id, valid_to=t(5))
    # A later value, and the same statement restated, on timelines the twin shares.
    service.write_facts(
        tenant_id=tenant,
        deltas=[
            delta("mira", "status", "e2", t(3), value="a-platinum"),
            delta("mira", "nickname", "e1", t(0), value="a-nick"),
        ],
    )
    service.put_schema(tenant_id=twin, schema=MemorySchema())
    service.put_schema(tenant_id=twin, schema=MemorySchema())
    assert service.put_schema(tenant_id=tenant, schema=MemorySchema()).version == 1
    assert service.schema(tenant_id=tenant).version == 1
    assert service.schema(tenant_id=twin).version == 2
    # Deleting A's e2 repairs A's timeline only.
    service.delete_episode(tenant_id=tenant, episode_id="e2")
    assert [
        (f.value, f.valid_to)
        for f in service.history(tenant_id=tenant, subject="mira", predicate="status")
    ] == [("a-gold", None)]
    assert service.facts(tenant_id=twin, subject="mira", predicate="city")[0] == b_city
    assert snapshot(service, twin) == before
    service.store.purge_tenant(tenant_id=tenant)
    assert service.facts(tenant_id=tenant) == []
    assert snapshot(service, twin) == before
    # The twin's own ledger entries and mentions of e2 are intact: deleting its e1 re-folds
    # the status timeline from them, and e2 still mentions mira.
    index = service.store.search if isinstance(service.store, SearchableStore) else None
    assert index is not None
    assert index.mentions_of(tenant_id=twin, episode_ids=["e2"]) == [("e2", "mira")]
    service.delete_episode(tenant_id=twin, episode_id="e1")
    assert [
        (f.value, f.valid_from, f.valid_to)
        for f in service.history(tenant_id=twin, subject="mira", predicate="status")
    ] == [("b-silver", LATER, None)]


# Queued for a time no other worker reaches: workers of other tests share the test Neo4j
# and claim every tenant's due episodes.
FUTURE = datetime(2100, 1, 1, tzinfo=UTC)


def pending_episode(svc: MemoryService, tenant: str, eid: str, at: datetime) -> None:
    svc.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id=eid, content="x", occurred_at=T0)
    )
    queued = svc.store.queue.enqueue(
        tenant_id=tenant, episode_id=eid, at=at, from_statuses=["stored"], reset_attempts=True
    )
    assert queued is not None
    assert queued.status == EpisodeStatus.PENDING


def candidate(tenant: str, cid: str, key: str, ep: str) -> PendingCandidate:
    return PendingCandidate(
        tenant_id=tenant,
        candidate_id=cid,
        episode_id=ep,
        statement_key=key,
        reason=HoldReason.SUPPORT,
        created_at=utcnow(),
        delta=delta("mira", "status", ep, T0, value="held"),
    )


def merge(tenant: str, cid: str) -> MergeCandidate:
    return MergeCandidate(
        tenant_id=tenant,
        candidate_id=cid,
        entity_id=f"mira-{cid}",
        name="Mira",
        entity_type="Person",
        existing_entity_id="mira",
        similarity=0.9,
        episode_id="e1",
        created_at=utcnow(),
    )


def test_the_queue_serves_each_tenant_its_own_episodes(
    service: MemoryService, tenant: str, twin: str
) -> None:
    q = service.store.queue
    for x, at in ((twin, FUTURE), (tenant, FUTURE + timedelta(minutes=1))):
        for eid in ("q1", "q2", "q3"):  # the twin's are due first: a blind claim takes them
            pending_episode(service, x, eid, at)
    now = FUTURE + timedelta(minutes=2)
    lease = now + timedelta(seconds=60)
    assert q.queue_counts(tenant_id=tenant) == q.queue_counts(tenant_id=twin)
    assert sum(q.queue_counts(tenant_id=tenant).values()) == 3
    got = q.claim(owner="a", now=now, lease_until=lease, max_attempts=3, tenant_id=tenant)
    assert got is not None
    assert got.tenant_id == tenant
    first = got.episode_id
    rest = [e for e in ("q1", "q2", "q3") if e != first]
    got2 = q.claim_episode(
        tenant_id=tenant,
        episode_id=rest[0],
        owner="a",
        now=now,
        lease_until=lease,
        from_statuses=["pending"],
    )
    assert got2 is not None
    assert got2.tenant_id == tenant
    # The twin claims its own copies, so that its rows are in the states A's calls look for.
    for eid in ("q1", "q2", "q3"):
        b = q.claim_episode(
            tenant_id=twin,
            episode_id=eid,
            owner="b",
            now=now,
            lease_until=lease,
            from_statuses=["pending"],
        )
        assert b is not None
        assert b.tenant_id == twin
    before = [service.get_episode(tenant_id=twin, episode_id=e) for e in ("q1", "q2", "q3")]
    # A's owner name on the twin's rows too: a blind update would match them.
    for eid in ("q1", "q2", "q3"):
        assert not q.extend_lease(
            tenant_id=tenant, episode_id=eid, owner="b", lease_until=lease + timedelta(hours=1)
        )
        assert not q.complete(tenant_id=tenant, episode_id=eid, owner="b", rejected=[])
        assert not q.fail(tenant_id=tenant, episode_id=eid, owner="b", error="x", retry_at=None)
    assert q.extend_lease(
        tenant_id=tenant, episode_id=first, owner="a", lease_until=lease + timedelta(hours=1)
    )
    assert q.complete(tenant_id=tenant, episode_id=first, owner="a", rejected=[])
    assert q.fail(tenant_id=tenant, episode_id=rest[0], owner="a", error="x", retry_at=None)
    again = q.enqueue(
        tenant_id=tenant,
        episode_id=rest[0],
        at=now,
        from_statuses=["failed", "processing"],
        reset_attempts=True,
    )
    assert again is not None
    assert again.tenant_id == tenant
    assert (
        q.enqueue(
            tenant_id=tenant,
            episode_id=rest[1],
            at=now,
            from_statuses=["processing"],
            reset_attempts=True,
        )
        is None
    )
    after = [service.get_episode(tenant_id=twin, episode_id=e) for e in ("q1", "q2", "q3")]
    assert after == before
    assert q.queue_counts(tenant_id=twin) == {"processing": 3} | {
        k: 0 for k in q.queue_counts(tenant_id=twin) if k != "processing"
    }


def test_a_claim_leaves_another_tenant_s_expired_leases_alone(
    service: MemoryService, tenant: str, twin: str
) -> None:
    """A worker of one tenant neither takes over nor gives up another tenant's episodes
    whose workers died (their leases ran out)."""
    q = service.store.queue
    for eid in ("x1", "x2"):
        pending_episode(service, twin, eid, FUTURE)
        dead = q.claim_episode(
            tenant_id=twin,
            episode_id=eid,
            owner="dead",
            now=FUTURE,
            lease_until=FUTURE + timedelta(seconds=1),
            from_statuses=["pending"],
        )
        assert dead is not None
    for eid in ("y1", "y2"):
        pending_episode(service, tenant, eid, FUTURE + timedelta(minutes=1))
    now = FUTURE + timedelta(minutes=2)  # the twin's leases have run out
    lease = now + timedelta(seconds=60)
    # max_attempts 1: an expired lease after one attempt gives the episode up, in A only.
    got = q.claim(owner="a", now=now, lease_until=lease, max_attempts=1, tenant_id=tenant)
    assert got is not None
    assert got.tenant_id == tenant
    got = q.claim(owner="a", now=now, lease_until=lease, max_attempts=5, tenant_id=tenant)
    assert got is not None
    assert got.tenant_id == tenant
    for eid in ("x1", "x2"):
        ep = service.get_episode(tenant_id=twin, episode_id=eid)
        assert (ep.status, ep.attempts, ep.last_error) == (EpisodeStatus.PROCESSING, 1, None)
    assert q.queue_counts(tenant_id=twin).get("failed", 0) == 0
    assert q.claim(owner="a", now=now, lease_until=lease, max_attempts=5, tenant_id=tenant) is None


def test_candidates_and_catalog_are_the_tenant_s_own(
    service: MemoryService, tenant: str, twin: str
) -> None:
    q = service.store.queue
    seed(service, twin, "b", extra=True)
    seed(service, tenant, "a")
    now = utcnow()
    for x, ep in ((twin, "e2"), (tenant, "e1")):
        # Support counts distinct episodes: the twin's e2 would be a second one for A.
        held, support = q.hold_candidate(candidate=candidate(x, "c1", "k1", ep))
        assert (held.tenant_id, support) == (x, 1)
        q.hold_candidate(candidate=candidate(x, "c2", "k2", "e1"))
        q.add_merge_candidates(candidates=[merge(x, "m1"), merge(x, "m2")])
    assert [
        c.tenant_id for c in q.candidates(tenant_id=tenant, status=None, episode_id=None, limit=10)
    ] == [tenant, tenant]
    assert [
        c.tenant_id
        for c in q.candidates(
            tenant_id=tenant, status=CandidateStatus.PENDING, episode_id="e1", limit=10
        )
    ] == [tenant, tenant]
    one = q.candidate(tenant_id=tenant, candidate_id="c1")
    assert one is not None
    assert one.tenant_id == tenant
    promoted = q.promote_candidates(tenant_id=tenant, statement_key="k1", now=now)
    assert [c.tenant_id for c in promoted] == [tenant]
    assert q.decide_candidate(
        tenant_id=tenant, candidate_id="c2", status=CandidateStatus.REJECTED, now=now, note="no"
    )
    twin_c = q.candidates(tenant_id=twin, status=None, episode_id=None, limit=10)
    assert [(c.tenant_id, c.status) for c in twin_c] == [(twin, CandidateStatus.PENDING)] * 2
    assert [m.tenant_id for m in q.merge_candidates(tenant_id=tenant, status=None, limit=10)] == [
        tenant,
        tenant,
    ]
    m1 = q.merge_candidate(tenant_id=tenant, candidate_id="m1")
    assert m1 is not None
    assert m1.tenant_id == tenant
    assert q.decide_merge_candidate(
        tenant_id=tenant, candidate_id="m1", status=MergeStatus.ACCEPTED, now=now
    )
    assert [m.status for m in q.merge_candidates(tenant_id=twin, status=None, limit=10)] == [
        MergeStatus.OPEN,
        MergeStatus.OPEN,
    ]
    catalog = q.entity_catalog(tenant_id=tenant, entity_types=None, limit=100)
    assert sorted(e.entity_id for e in catalog) == ["acct", "mira"]
    assert all(e.tenant_id == tenant for e in catalog)
    assert q.add_entity_alias(tenant_id=twin, entity_id="mira", alias="Bobo")
    assert q.add_entity_alias(tenant_id=tenant, entity_id="mira", alias="Mimi")
    a_mira = service.store.entity(tenant_id=tenant, entity_id="mira")
    b_mira = service.store.entity(tenant_id=twin, entity_id="mira")
    assert a_mira is not None
    assert b_mira is not None
    assert (list(a_mira.aliases), list(b_mira.aliases)) == (["Mimi"], ["Bobo"])
    assert sorted(q.session_entities(tenant_id=tenant, session_id="s1", limit=10)) == [
        "acct",
        "mira",
    ]
    q.purge_queue_data(tenant_id=tenant)
    assert len(q.candidates(tenant_id=twin, status=None, episode_id=None, limit=10)) == 2
    assert len(q.merge_candidates(tenant_id=twin, status=None, limit=10)) == 2


def export(store: Store, tenant: str) -> list[dict[str, Any]]:
    transfer = cast(TransferStore, store)
    return [r for k in RECORD_ORDER for r in transfer.export_records(tenant_id=tenant, kind=k)]


def test_restored_twins_share_fact_ids_and_still_stay_apart(
    store: Store, service: MemoryService, tenant: str, twin: str, embedder: SentenceEmbedder
) -> None:
    """An export restored into another tenant: the same fact ids on both sides."""
    assert isinstance(store, SearchableStore)
    seed(service, tenant, "a")
    dump = export(store, tenant)
    # Version ids are unique in a store, fact ids only per tenant: the twin's versions get
    # ids of their own, its facts keep A's.
    for kind in RECORD_ORDER:
        rows = [r for r in dump if r["type"] == kind]
        if kind == "version":
            rows = [{**r, "version_id": r["version_id"] + "t"} for r in rows]
        cast(TransferStore, store).restore_records(tenant_id=twin, records=rows)
    assert export(store, tenant) == dump  # nothing of the twin in the export
    assert len(export(store, twin)) == len(dump)
    ids = sorted(f.fact_id for f in service.facts(tenant_id=tenant))
    assert sorted(f.fact_id for f in service.facts(tenant_id=twin)) == ids
    store.search.index_pending(tenant_id=twin, embedder=embedder)
    before = snapshot(service, twin)
    window = Retriever.window(t(1))

    def twin_finds_paris() -> int:
        hits = store.search.fulltext(
            tenant_id=twin, kind=ItemKind.FACT, terms=["paris"], window=window, limit=10
        )
        return len(hits)

    assert twin_finds_paris() == 1
    # A's episode state, a retraction and a deletion, by ids the twin holds too.
    ep = service.get_episode(tenant_id=tenant, episode_id="e2")
    store.save_episode_state(
        episode=ep.model_copy(
            update={"status": EpisodeStatus.FAILED, "attempts": 7, "last_error": "x"}
        )
    )
    city = service.facts(tenant_id=tenant, subject="mira", predicate="city")[0]
    service.retract(tenant_id=tenant, fact_id=city.fact_id, valid_to=t(5))
    # After its end A's "paris" is not visible, though the twin's, same id, still is.
    assert (
        store.search.fulltext(
            tenant_id=tenant,
            kind=ItemKind.FACT,
            terms=["paris"],
            window=Retriever.window(t(6)),
            limit=10,
        )
        == []
    )
    store.queue.add_entity_alias(tenant_id=tenant, entity_id="mira", alias="Mimi")
    service.delete_episode(tenant_id=tenant, episode_id="e1")
    assert service.facts(tenant_id=tenant, subject="mira", predicate="city") == []
    assert snapshot(service, twin) == before
    assert twin_finds_paris() == 1
    for kind, word, n in (
        (ItemKind.EPISODE, "hello", 2),
        (ItemKind.ENTITY, "mira", 1),
        (ItemKind.ENTITY, "acct", 1),
    ):
        hits = store.search.fulltext(
            tenant_id=twin, kind=kind, terms=[word], window=window, limit=10
        )
        assert len(hits) == n, (kind, word, hits)
    assert store.search.facts_by_id(tenant_id=twin, fact_ids=ids, window=window)
    # A's deleted facts leave no search item behind, though the twin holds the same ids:
    # what waits for a vector (A was never indexed) is A's facts left — one item per fact
    # id on SQLite, per version (at any system time) on Neo4j — not the deleted ones.
    versions = [r["fact_id"] for r in export(store, tenant) if r["type"] == "version"]
    waiting = {(p.tenant_id, p.kind): p.count for p in store.search.pending(model=embedder.name)}
    assert len(set(versions)) <= waiting.get((tenant, ItemKind.FACT), 0) <= len(versions)
    assert len(set(versions)) < len(ids)


def test_a_fact_cites_and_dates_from_its_own_tenant_s_episodes(
    service: MemoryService, tenant: str, twin: str
) -> None:
    for eid, at in (("e1", t(-30)), ("only-b", t(-10))):
        service.add_episode(
            tenant_id=twin, body=EpisodeCreate(episode_id=eid, content="b", occurred_at=at)
        )
    service.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id="e1", content="a", occurred_at=t(0))
    )
    with pytest.raises(ValidationError, match="does not exist in this tenant"):
        service.write_facts(
            tenant_id=tenant,
            deltas=[
                MemoryDelta(
                    subject="mira", predicate="status", value="x", source_episode_id="only-b"
                )
            ],
        )
    service.write_facts(
        tenant_id=tenant,
        deltas=[MemoryDelta(subject="mira", predicate="status", value="a", source_episode_id="e1")],
    )
    history = service.history(tenant_id=tenant, subject="mira", predicate="status")
    assert [(f.value, f.valid_from) for f in history] == [("a", t(0))]  # A's e1, not B's


def test_an_entity_s_type_is_its_own_tenant_s(
    service: MemoryService, tenant: str, twin: str
) -> None:
    for x, kind in ((twin, "Person"), (tenant, "Robot")):
        service.add_episode(
            tenant_id=x, body=EpisodeCreate(episode_id="e1", content="x", occurred_at=T0)
        )
        service.write_facts(
            tenant_id=x, deltas=[delta("zed", "status", "e1", T0, value="on", subject_type=kind)]
        )
    assert service.store.entity(tenant_id=tenant, entity_id="zed").entity_type == "Robot"
    assert service.store.entity(tenant_id=twin, entity_id="zed").entity_type == "Person"


def test_sourced_by_follows_only_the_tenant_s_own_timelines(
    store: Store, service: MemoryService, tenant: str, twin: str
) -> None:
    """The timelines an episode asserted on are the tenant's: the twin's e1 also speaks
    of mira.knows, which A's e1 never did (A's knows comes from e2)."""
    assert isinstance(store, SearchableStore)
    seed(service, twin, "b", extra=True)
    seed(service, tenant, "a")
    service.write_facts(
        tenant_id=tenant,
        deltas=[
            # the twin's very timeline (a relation's timeline is keyed by its object too)
            delta("mira", "knows", "e2", LATER, object="b-only", object_type="Person")
        ],
    )
    now = utcnow()
    held = store.search.staleness_versions(
        tenant_id=tenant, episode_ids=["e1"], pairs=[], window=Window(as_of=now, known_at=now)
    )
    # e2 cut e1's status: the gold version ended (not valid now), silver holds.
    assert sorted((v.predicate, v.said, v.now, v.sources) for v in held.around) == [
        ("city", "paris", True, ("e1",)),
        ("holds_account", "acct", True, ("e1",)),
        ("nickname", "a-nick", True, ("e1",)),
        ("status", "a-gold", False, ("e1",)),
        ("status", "a-silver", True, ("e2",)),
    ]
    assert held.pairs == []


@pytest.fixture(scope="module")
def embedder() -> SentenceEmbedder:
    return default_embedder()


def test_search_finds_only_the_tenant_s_own_items(
    store: Store, service: MemoryService, tenant: str, twin: str, embedder: SentenceEmbedder
) -> None:
    assert isinstance(store, SearchableStore)
    index = store.search
    model = embedder.name
    seed(service, twin, "quokka", extra=True)
    between = utcnow()  # after everything of the twin, before anything of A
    seed(service, tenant, "passport")

    def pending(x: str) -> int:
        return sum(p.count for p in index.pending(model=model) if p.tenant_id == x)

    # Indexers of other tests may embed these items meanwhile (they serve every tenant
    # of the shared test Neo4j): counts can only fall, never exceed what was pending.
    a_pending, b_pending = pending(tenant), pending(twin)
    # The index lag of A dates from A's first write, not from the twin's same ids.
    first = service.get_episode(tenant_id=tenant, episode_id="e1").recorded_at
    for p in index.pending(model=model):
        if p.tenant_id == tenant and p.oldest is not None:
            assert p.oldest >= first, p
    # An indexing pass of A embeds A's items, all of them, and only them.
    assert index.index_pending(tenant_id=tenant, embedder=embedder) <= a_pending
    assert pending(tenant) == 0
    assert index.index_pending(tenant_id=twin, embedder=embedder) <= b_pending
    assert pending(twin) == 0
    now = utcnow()
    window = Retriever.window()
    vec = embedder.encode(["quokka says hello"])[0]
    for kind in ItemKind:
        hits = index.fulltext(
            tenant_id=tenant, kind=kind, terms=["quokka", "hello", "mira"], window=window, limit=50
        )
        near = index.vector_search(
            tenant_id=tenant, kind=kind, vector=vec, model=model, window=window, limit=50
        )
        for h in [*hits, *near]:
            assert "quokka" not in h.item_id
        ids = {h.item_id for h in near}
        assert len(ids) == len(near)  # the twin's same ids would come twice
    # Between the twin's writes and A's: A had nothing yet, though the twin's same ids did.
    assert service.get_episode(tenant_id=tenant, episode_id="e1").recorded_at > between
    early = Retriever.window(t(1), between)
    for kind, word in ((ItemKind.EPISODE, "hello"), (ItemKind.ENTITY, "mira")):
        assert (
            index.fulltext(tenant_id=tenant, kind=kind, terms=[word], window=early, limit=10) == []
        )
        assert (
            len(index.fulltext(tenant_id=twin, kind=kind, terms=[word], window=early, limit=10))
            >= 1
        )
        assert (
            index.vector_search(
                tenant_id=tenant, kind=kind, vector=vec, model=model, window=early, limit=10
            )
            == []
        )

    # Vector search in the past (another query on Neo4j): A's own fact ids only.
    def fact_ids(x: str) -> set[str]:
        preds = ("status", "city", "nickname", "holds_account", "knows")
        return {
            f.fact_id
            for p in preds
            for f in service.history(tenant_id=x, subject="mira", predicate=p)
        }

    past = index.vector_search(
        tenant_id=tenant,
        kind=ItemKind.FACT,
        vector=vec,
        model=model,
        window=Retriever.window(t(1), utcnow()),
        limit=50,
    )
    assert past
    assert {h.item_id for h in past} <= fact_ids(tenant)
    a_facts = service.facts(tenant_id=tenant, as_of=t(1))
    b_facts = service.facts(tenant_id=twin, as_of=t(1))
    a_ids = [f.fact_id for f in a_facts]
    b_ids = [f.fact_id for f in b_facts]
    assert index.facts_by_id(tenant_id=tenant, fact_ids=b_ids, window=Retriever.window(t(1))) == {}
    assert set(
        index.facts_by_id(tenant_id=tenant, fact_ids=a_ids, window=Retriever.window(t(1)))
    ) == set(a_ids)
    touching = index.facts_touching(
        tenant_id=tenant, entity_ids=["mira", "acct"], window=Retriever.window(t(1)), limit=50
    )
    assert sorted(f.fact_id for f in touching) == sorted(a_ids)
    held = index.staleness_versions(
        tenant_id=tenant,
        episode_ids=["e1", "e2"],
        pairs=[("mira", "status"), ("mira", "knows")],
        window=Window(as_of=now, known_at=now),
    )
    # 4 versions from e1, 1 from e2; mira.status is covered by them, mira.knows (the
    # twin's) is read as a pair and holds nothing of A's.
    assert sorted(str(v.said) for v in held.around) == [
        "acct",
        "paris",
        "passport-gold",
        "passport-nick",
        "passport-silver",
    ]
    assert held.pairs == []
    assert index.episodes_by_id(tenant_id=tenant, episode_ids=["e1", "e2"], known_at=between) == {}
    eps = index.episodes_by_id(tenant_id=tenant, episode_ids=["e1", "e2"], known_at=now)
    assert {e.content for e in eps.values()} == {"passport says hello"}
    ents = index.entities_by_id(
        tenant_id=tenant, entity_ids=["mira", "acct", "quokka-only"], known_at=now
    )
    assert sorted(ents) == ["acct", "mira"]
    assert {e.tenant_id for e in ents.values()} == {tenant}
    assert sorted(index.mentions_of(tenant_id=tenant, episode_ids=["e1"])) == [
        ("e1", "acct"),
        ("e1", "mira"),
    ]
    assert sorted(
        index.mentioning(tenant_id=tenant, entity_ids=["mira"], known_at=now, limit=50)
    ) == [("e1", "mira"), ("e2", "mira")]
    assert index.session_neighbors(
        tenant_id=tenant, episode_ids=["e1"], known_at=now, radius=3
    ) == [("e1", "e2", 1)]
    found = Retriever(store, embedder=embedder).search(tenant_id=tenant, query="quokka", limit=20)
    assert "quokka" not in " ".join(r.item.model_dump_json() for r in found)


def test_forgetting_an_entity_leaves_the_twin_s_same_entity_whole(
    store: Store, service: MemoryService, tenant: str, twin: str
) -> None:
    """Erasure by ids the twin holds too: its entity, facts, episodes and search docs stay."""
    from graph.erasure import ErasableStore, forget

    assert isinstance(store, SearchableStore)
    assert isinstance(store, ErasableStore)
    seed(service, twin, "b")
    seed(service, tenant, "a")
    before = snapshot(service, twin)
    window = Retriever.window(t(1))

    def twin_hits(kind: ItemKind, word: str) -> int:
        return len(
            store.search.fulltext(tenant_id=twin, kind=kind, terms=[word], window=window, limit=10)
        )

    found = {
        (k, w): twin_hits(k, w)
        for k, w in (
            (ItemKind.ENTITY, "mira"),
            (ItemKind.ENTITY, "acct"),
            (ItemKind.EPISODE, "hello"),
        )
    }
    assert all(found.values()), found
    gone = forget(store, tenant_id=tenant, entity_id="mira", dry_run=False)
    assert gone.entities == 1
    with pytest.raises(NotFoundError):
        service.entity(tenant_id=tenant, entity_id="mira")
    assert snapshot(service, twin) == before
    entity, facts = service.entity(tenant_id=twin, entity_id="mira")
    assert entity.entity_type == "Person"
    assert {f.value for f in facts if f.predicate == "nickname"} == {"b-nick"}
    assert {(k, w): twin_hits(k, w) for k, w in found} == found


def test_an_export_carries_the_tenant_s_own_schemas(
    store: Store, service: MemoryService, tenant: str, twin: str
) -> None:
    def schema(entity: str) -> MemorySchema:
        return MemorySchema.model_validate({"entity_types": [{"name": entity}], "predicates": []})

    service.put_schema(tenant_id=twin, schema=schema("Quokka"))
    service.put_schema(tenant_id=twin, schema=schema("Wombat"))
    service.put_schema(tenant_id=tenant, schema=schema("Person"))
    rows = [r for r in export(store, tenant) if r["type"] == "schema"]
    assert len(rows) == 1, rows
    assert "Person" in str(rows[0])
    assert "Quokka" not in str(rows)
    assert "Wombat" not in str(rows)


def test_a_re_fold_reads_only_the_tenant_s_own_ledger(
    service: MemoryService, tenant: str, twin: str
) -> None:
    """Deleting an episode re-folds its timelines from the ledger entries of the tenant
    alone: the twin's entries under the same timeline keys (other values) stay out.

    Here the twin writes *after* the tenant: its e1 entry for mira.status (same valid
    time, recorded later) would win a fold that wrongly read it, and the tenant's status
    would become the twin's "b-gold". (Written first, as elsewhere in this file, it loses
    the fold to the tenant's own entry and a missing filter goes unseen.)"""
    seed(service, tenant, "a")
    seed(service, twin, "b")
    before = snapshot(service, twin)
    service.delete_episode(tenant_id=tenant, episode_id="e2")
    statuses = service.history(tenant_id=tenant, subject="mira", predicate="status")
    current = [f for f in statuses if f.retired_at is None]
    assert [(f.value, f.valid_from, f.valid_to) for f in current] == [("a-gold", t(0), None)]
    assert {f.value for f in statuses} <= {"a-gold", "a-silver"}
    assert snapshot(service, twin) == before


def test_a_one_tenant_claim_takes_the_tenant_s_own_due_episode(
    service: MemoryService, tenant: str, early: str
) -> None:
    """A claim for one tenant, of a pending episode: the twin's same id, due first and
    first in tenant order (where the round robin starts), is not the tenant's."""
    q = service.store.queue
    pending_episode(service, early, "q1", FUTURE)
    pending_episode(service, tenant, "q1", FUTURE + timedelta(minutes=1))
    now = FUTURE + timedelta(minutes=2)
    got = q.claim(
        owner="a",
        now=now,
        lease_until=now + timedelta(seconds=60),
        max_attempts=3,
        tenant_id=tenant,
    )
    assert got is not None
    assert (got.tenant_id, got.episode_id, got.status) == (tenant, "q1", EpisodeStatus.PROCESSING)
    assert service.get_episode(tenant_id=early, episode_id="q1").status == EpisodeStatus.PENDING


def test_holding_a_candidate_answers_the_tenant_s_own(
    service: MemoryService, tenant: str, early: str
) -> None:
    """The same episode and statement key in both tenants, the twin's held first: what
    holding answers (the stored candidate) is the tenant's."""
    q = service.store.queue
    for x, cid in ((early, "c-early"), (tenant, "c-own")):
        stored, support = q.hold_candidate(candidate=candidate(x, cid, "k1", "e1"))
        assert (stored.tenant_id, stored.candidate_id, support) == (x, cid, 1)


def test_a_merge_candidate_read_by_id_is_the_tenant_s_own(
    service: MemoryService, tenant: str, early: str
) -> None:
    """The same merge candidate id in both tenants, the twin's written first and first in
    tenant order (a read by id alone meets it first): the tenant reads its own values."""
    q = service.store.queue
    for x, name, similarity in ((early, "Mira Early", 0.5), (tenant, "Mira Own", 0.9)):
        q.add_merge_candidates(
            candidates=[merge(x, "m1").model_copy(update={"name": name, "similarity": similarity})]
        )
    got = q.merge_candidate(tenant_id=tenant, candidate_id="m1")
    assert got is not None
    assert (got.tenant_id, got.name, got.similarity) == (tenant, "Mira Own", 0.9)
    other = q.merge_candidate(tenant_id=early, candidate_id="m1")
    assert other is not None
    assert (other.tenant_id, other.name, other.similarity) == (early, "Mira Early", 0.5)


def test_a_lease_is_held_on_the_tenant_s_own_episode(
    service: MemoryService, tenant: str, twin: str
) -> None:
    """The worker holds the lease of the twin's q1, not of the tenant's (still pending):
    a write under that lease in the tenant is refused."""
    q = service.store.queue
    for x in (twin, tenant):
        pending_episode(service, x, "q1", FUTURE)
    now = FUTURE + timedelta(minutes=1)
    got = q.claim(
        owner="w1", now=now, lease_until=now + timedelta(seconds=60), max_attempts=3, tenant_id=twin
    )
    assert got is not None
    assert (got.tenant_id, got.episode_id) == (twin, "q1")
    with pytest.raises(LeaseLostError):
        service.write_facts(
            tenant_id=tenant,
            lease=("q1", "w1"),
            deltas=[delta("mira", "status", "q1", T0, value="a")],
        )
    assert service.facts(tenant_id=tenant) == []
    written = service.write_facts(
        tenant_id=twin, lease=("q1", "w1"), deltas=[delta("mira", "status", "q1", T0, value="b")]
    )
    assert [f.value for f in written.facts] == ["b"]


def test_a_tenant_s_clock_is_its_own(
    store: Store, service: MemoryService, tenant: str, twin: str
) -> None:
    """A version records at max(wall clock, the tenant's last instant + 1 us). A restore
    moves the clock past what it restores (a ledger from a machine whose clock ran
    ahead): the twin's clock, fifty years ahead, never moves the tenant's."""
    source = "s-" + uuid.uuid4().hex[:12]
    try:
        seed(service, source, "s")
        dump = export(store, source)
    finally:
        store.purge_tenant(tenant_id=source)
    ahead = timedelta(days=365 * 50)

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

    for kind in RECORD_ORDER:
        cast(TransferStore, store).restore_records(
            tenant_id=twin, records=[shifted(r) for r in dump if r["type"] == kind]
        )
    far = utcnow() + ahead - timedelta(days=1)
    # The twin's next write records after its restored ledger; the tenant's, now.
    for x in (twin, tenant):
        service.add_episode(
            tenant_id=x, body=EpisodeCreate(episode_id="n1", content="x", occurred_at=T0)
        )
    b = service.write_facts(tenant_id=twin, deltas=[delta("zed", "status", "n1", T0, value="b")])
    assert b.facts[0].recorded_at > far
    a = service.write_facts(tenant_id=tenant, deltas=[delta("zed", "status", "n1", T0, value="a")])
    assert a.facts[0].recorded_at < utcnow() + timedelta(minutes=1)


def test_search_ranks_the_tenant_s_items_by_their_own_vectors(
    store: Store, service: MemoryService, tenant: str, twin: str, embedder: SentenceEmbedder
) -> None:
    """An episode id both tenants hold: the twin's e9 says what the query asks, the
    tenant's does not. The tenant's answer ranks its own episodes by their own vectors
    (a nearest-neighbour pass over both tenants would lift its e9 by the twin's)."""
    assert isinstance(store, SearchableStore)
    texts = {
        twin: {"e9": "a quokka smiling at the camera on Rottnest island"},
        tenant: {
            "e9": "quarterly tax forms and invoices",
            "e5": "a small marsupial hopping near Perth",
            "e6": "the printer needs new toner",
        },
    }
    for x, eps in texts.items():
        for eid, text in eps.items():
            service.add_episode(
                tenant_id=x, body=EpisodeCreate(episode_id=eid, content=text, occurred_at=T0)
            )
        store.search.index_pending(tenant_id=x, embedder=embedder)
    found = Retriever(store, embedder=embedder).search(
        tenant_id=tenant, query="quokka", scopes=[ItemKind.EPISODE], limit=3
    )
    assert [cast(Any, r.item).episode_id for r in found][:1] == ["e5"]
    assert {cast(Any, r.item).tenant_id for r in found} == {tenant}


def test_search_ranks_the_tenant_s_facts_by_their_own_vectors(
    store: Store, service: MemoryService, tenant: str, twin: str, embedder: SentenceEmbedder
) -> None:
    """The same with facts, whose ids only a restore makes equal: the twin holds the
    tenant's fact ids, restored from a copy in which one of them says what the query asks.
    Searched now and as known at an instant (the store's other query)."""
    assert isinstance(store, SearchableStore)
    service.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id="e1", content="notes", occurred_at=T0)
    )
    written = service.write_facts(
        tenant_id=tenant,
        deltas=[
            delta("mira", "note", "e1", T0, value="quarterly tax forms and invoices"),
            delta("mira", "hobby", "e1", T0, value="a small marsupial hopping near Perth"),
            delta("mira", "chore", "e1", T0, value="the printer needs new toner"),
        ],
    )
    tax = written.facts[0].fact_id
    quokka = "a quokka smiling at the camera on Rottnest island"

    def other(r: dict[str, Any]) -> dict[str, Any]:
        if r.get("fact_id") != tax:
            return r
        if r["type"] == "version":
            return {**r, "value": quokka}
        return {**r, "claim": {**r["claim"], "value": quokka}} if r.get("claim") else r

    dump = export(store, tenant)
    for kind in RECORD_ORDER:
        rows = [other(r) for r in dump if r["type"] == kind]
        if kind == "version":  # version ids are unique in a store
            rows = [{**r, "version_id": r["version_id"] + "t"} for r in rows]
        cast(TransferStore, store).restore_records(tenant_id=twin, records=rows)
    assert [f.value for f in service.facts(tenant_id=twin, predicate="note")] == [quokka]
    for x in (twin, tenant):
        store.search.index_pending(tenant_id=x, embedder=embedder)
    retriever = Retriever(store, embedder=embedder)
    for known_at in (None, utcnow()):
        found = retriever.search(
            tenant_id=tenant, query="quokka", scopes=[ItemKind.FACT], known_at=known_at, limit=3
        )
        assert [cast(Any, r.item).predicate for r in found][:1] == ["hobby"], known_at
        assert {cast(Any, r.item).tenant_id for r in found} == {tenant}
    # The index's nearest current facts, asked directly (a widening fetch does): the
    # tenant's tax fact is ranked by its own vector, not by the twin's quokka.
    predicate = {f.fact_id: f.predicate for f in written.facts}
    hits = store.search.vector_search(
        tenant_id=tenant,
        kind=ItemKind.FACT,
        vector=embedder.encode(["quokka"])[0],
        model=embedder.name,
        window=Retriever.window(),
        limit=3,
    )
    assert [predicate.get(h.item_id) for h in hits][:1] == ["hobby"]
    assert len({h.item_id for h in hits}) == len(hits)


def test_search_quotes_the_tenant_s_episode_though_the_twin_s_same_id_is_stale(
    store: Store, service: MemoryService, tenant: str, twin: str, embedder: SentenceEmbedder
) -> None:
    """Both tenants' e1 says mira's status is wombat; the twin's e2 then changed it, so
    the twin's e1 is stale (search leaves it out), the tenant's is not: the staleness check
    reads the timelines of the tenant's own e1 (a check over both tenants would drop it)."""
    assert isinstance(store, SearchableStore)
    for x in (twin, tenant):
        service.add_episode(
            tenant_id=x,
            body=EpisodeCreate(
                episode_id="e1", content="mira holds a wombat membership", occurred_at=T0
            ),
        )
        service.write_facts(tenant_id=x, deltas=[delta("mira", "status", "e1", T0, value="wombat")])
    service.add_episode(
        tenant_id=twin,
        body=EpisodeCreate(episode_id="e2", content="mira upgraded her plan", occurred_at=LATER),
    )
    service.write_facts(
        tenant_id=twin, deltas=[delta("mira", "status", "e2", LATER, value="koala")]
    )
    for x in (twin, tenant):
        store.search.index_pending(tenant_id=x, embedder=embedder)
    retriever = Retriever(store, embedder=embedder)

    def quoted(x: str) -> list[str]:
        found = retriever.search(
            tenant_id=x, query="wombat membership", scopes=[ItemKind.EPISODE], limit=5
        )
        assert {cast(Any, r.item).tenant_id for r in found} <= {x}
        return [cast(Any, r.item).episode_id for r in found]

    assert "e1" not in quoted(twin)
    assert quoted(tenant) == ["e1"]
