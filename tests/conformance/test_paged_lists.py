"""Paged lists, on both stores: a page is read in an index's order from the cursor on
(tests/integration/test_sqlite_plans.py, test_neo4j_plans.py), and the pages together
are exactly the list: nothing skipped or repeated, whatever is written between pages,
however many items tie on the first sort key."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from graph.model import EpisodeCreate, Fact, MemoryDelta
from graph.queue import (
    CandidateStatus,
    HoldReason,
    MergeCandidate,
    MergeStatus,
    PendingCandidate,
)
from graph.service import MemoryService
from graph.timeutil import utcnow

T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)


@pytest.fixture
def svc(service: MemoryService, tenant: str) -> Iterator[MemoryService]:
    service.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id="e1", content="x", occurred_at=T0)
    )
    yield service
    service.store.queue.purge_queue_data(tenant_id=tenant)


def fact(subject: str, predicate: str, value: object = None, obj: str | None = None) -> MemoryDelta:
    return MemoryDelta(
        subject=subject,
        subject_type="Person",
        predicate=predicate,
        value=value,
        object=obj,
        object_type="Account" if obj else None,
        valid_from=T0,
        source_episode_id="e1",
    )


def key(f: Fact) -> tuple[str, str, str, datetime]:
    return (f.subject, f.predicate, f.fact_id, f.recorded_at)


def test_facts_of_a_predicate_page_exactly_while_writes_go_on(
    svc: MemoryService, tenant: str
) -> None:
    """GET /facts?predicate=: several facts of one subject (a many-valued relation: ties on
    the subject, split across pages), other predicates in between, and between pages new
    facts before and after the cursor, a supersession and a retraction of facts not read
    yet: the pages answer the first page's moment, every fact once."""
    deltas = [fact(f"p{i:02d}", "holds", obj=f"acct-{j}") for i in range(6) for j in range(3)]
    deltas += [fact(f"p{i:02d}", "tier", value=f"gold-{i}") for i in range(6)]
    deltas += [fact(f"p{i:02d}", "city", value="oslo") for i in range(6)]  # interleaved
    svc.write_facts(tenant_id=tenant, deltas=deltas)
    moment = utcnow()
    for predicate in ("holds", "tier"):
        expected = svc.facts(
            tenant_id=tenant, predicate=predicate, as_of=moment, known_at=moment, limit=1000
        )
        assert len(expected) == (18 if predicate == "holds" else 6)
        assert [key(f) for f in expected] == sorted(key(f) for f in expected)
        seen: list[Fact] = []
        after = None
        pages = 0
        while True:
            page = svc.facts(
                tenant_id=tenant,
                predicate=predicate,
                as_of=moment,
                known_at=moment,
                limit=4,
                after=after,
            )
            seen += page
            pages += 1
            # Writes between pages: subjects sorting before and after the cursor, a new
            # value superseding a fact still to come, a retraction of one.
            later = [
                fact(f"a{pages}", predicate, value="new", obj=None)
                if predicate == "tier"
                else fact(f"a{pages}", predicate, obj="acct-9"),
                fact(f"z{pages}", predicate, value="new", obj=None)
                if predicate == "tier"
                else fact(f"z{pages}", predicate, obj="acct-9"),
            ]
            if predicate == "tier" and pages == 1:
                later.append(
                    MemoryDelta(
                        subject="p05",
                        predicate="tier",
                        value="platinum",
                        valid_from=T0 + timedelta(days=1),
                        source_episode_id="e1",
                    )
                )
            svc.write_facts(tenant_id=tenant, deltas=later)
            if predicate == "holds" and pages == 1:
                last = next(f for f in expected if f.subject == "p05")
                svc.retract(tenant_id=tenant, fact_id=last.fact_id)
            if len(page) < 4:
                break
            after = (page[-1].subject, page[-1].predicate, page[-1].fact_id)
        assert [key(f) for f in seen] == [key(f) for f in expected], predicate
        assert pages >= 2


def test_the_entity_catalog_of_some_types_pages_exactly(svc: MemoryService, tenant: str) -> None:
    """Entities written in one batch share created_at: ties, broken by entity id, and
    split across pages; entities written between pages are newer than the cursor."""
    q = svc.store.queue
    for batch in range(3):
        deltas = [
            MemoryDelta(
                subject=f"b{batch}-{who}-{i}",
                subject_type=who,
                predicate="note",
                value=i,
                valid_from=T0,
                source_episode_id="e1",
            )
            for who in ("Person", "Company", "Ship")
            for i in range(3)
        ]
        svc.write_facts(tenant_id=tenant, deltas=deltas)
    for types in ({"Person"}, {"Person", "Company"}, None):
        expected = q.entity_catalog(tenant_id=tenant, entity_types=types, limit=1000)
        want = 9 * (len(types) if types else 3)
        assert sum(not e.entity_id.startswith("new-") for e in expected) == want
        order = sorted(expected, key=lambda e: e.entity_id)
        order.sort(key=lambda e: e.created_at, reverse=True)
        assert [e.entity_id for e in expected] == [e.entity_id for e in order]
        seen: list[str] = []
        after = None
        page_no = 0
        while True:
            page = q.entity_catalog(tenant_id=tenant, entity_types=types, limit=2, after=after)
            seen += [e.entity_id for e in page]
            page_no += 1
            svc.write_facts(
                tenant_id=tenant,
                deltas=[
                    MemoryDelta(
                        subject=f"new-{page_no}-{len(seen)}",
                        subject_type="Person",
                        predicate="note",
                        value=0,
                        source_episode_id="e1",
                    )
                ],
            )
            if len(page) < 2:
                break
            after = (page[-1].created_at, page[-1].entity_id)
        assert seen == [e.entity_id for e in expected], types


def test_review_lists_are_oldest_first_ties_by_id(svc: MemoryService, tenant: str) -> None:
    q = svc.store.queue
    at = utcnow() - timedelta(hours=1)
    # Candidates held in an order other than their ids', two pairs at one instant.
    spec = [("k5", 0, "e1"), ("k3", 1, "e2"), ("k1", 1, "e1"), ("k4", 2, "e2"), ("k2", 2, "e1")]
    for cid, sec, ep in spec:
        q.hold_candidate(
            candidate=PendingCandidate(
                tenant_id=tenant,
                candidate_id=cid,
                episode_id=ep,
                statement_key=f"s-{cid}",
                reason=HoldReason.CONFIRMATION,
                delta=fact("mira", "tier", value=cid),
                created_at=at + timedelta(seconds=sec),
            )
        )
    assert q.decide_candidate(
        tenant_id=tenant,
        candidate_id="k1",
        status=CandidateStatus.REJECTED,
        now=utcnow(),
        note=None,
    )

    def ids(status: CandidateStatus | None, episode: str | None, limit: int = 10) -> list[str]:
        found = q.candidates(tenant_id=tenant, status=status, episode_id=episode, limit=limit)
        return [c.candidate_id for c in found]

    assert ids(None, None) == ["k5", "k1", "k3", "k2", "k4"]
    assert ids(None, None, limit=3) == ["k5", "k1", "k3"]
    assert ids(CandidateStatus.PENDING, None) == ["k5", "k3", "k2", "k4"]
    assert ids(CandidateStatus.PENDING, None, limit=2) == ["k5", "k3"]
    assert ids(CandidateStatus.REJECTED, None) == ["k1"]
    assert ids(None, "e1") == ["k5", "k1", "k2"]
    assert ids(CandidateStatus.PENDING, "e1") == ["k5", "k2"]
    q.add_merge_candidates(
        candidates=[
            MergeCandidate(
                tenant_id=tenant,
                candidate_id=cid,
                entity_id=f"mira-{cid}",
                name="Mira",
                existing_entity_id="mira",
                entity_type="Person",
                similarity=0.9,
                episode_id="e1",
                created_at=at + timedelta(seconds=sec),
            )
            for cid, sec, _ in spec
        ]
    )
    assert q.decide_merge_candidate(
        tenant_id=tenant, candidate_id="k3", status=MergeStatus.DISMISSED, now=utcnow()
    )

    def merges(status: MergeStatus | None, limit: int = 10) -> list[str]:
        found = q.merge_candidates(tenant_id=tenant, status=status, limit=limit)
        return [m.candidate_id for m in found]

    assert merges(None) == ["k5", "k1", "k3", "k2", "k4"]
    assert merges(None, limit=2) == ["k5", "k1"]
    assert merges(MergeStatus.OPEN) == ["k5", "k1", "k2", "k4"]
    assert merges(MergeStatus.DISMISSED) == ["k3"]
