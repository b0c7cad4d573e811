"""Event mapping, policy holds and entity resolution on each store."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from extraction import LlmExtractor, on_episode_created
from extraction.loopback import LoopbackLLM, answer
from extraction.review import confirm_candidate, decide_merge_candidate, reject_candidate
from graph.errors import ConflictError
from graph.model import EpisodeCreate, EpisodeKind, ExtractMode, MemoryDelta
from graph.queue import CandidateStatus, MergeStatus
from graph.schema import EntityTypeSpec, MemorySchema, PredicateSpec
from graph.service import MemoryService
from tests.integration.test_extraction_pipeline import fact, settings

T0 = datetime(2026, 1, 10, 9, tzinfo=UTC)

BANK = MemorySchema.model_validate(
    {
        "mode": "strict",
        "entity_types": [{"name": n} for n in ("Customer", "Account", "Policy")],
        "predicates": [
            {"name": "holds_account", "object_type": "Account", "subject_types": ["Customer"]},
            {"name": "account_status", "value_type": "string", "subject_types": ["Account"]},
            {"name": "segment", "value_type": "string"},
            {"name": "covered_by", "object_type": "Policy"},
            {"name": "coverage_amount", "value_type": "number", "subject_types": ["Policy"]},
            {"name": "tier", "value_type": "string"},
        ],
        "event_mappings": [
            {
                "event_type": "customer.account_opened",
                "subject": {"field": "customer_id", "type": "Customer"},
                "valid_from_field": "opened_at",
                "facts": [
                    {
                        "predicate": "holds_account",
                        "object": {"field": "account_id", "type": "Account"},
                    },
                    {
                        "predicate": "account_status",
                        "subject": {"field": "account_id", "type": "Account"},
                        "value": "open",
                    },
                    {"predicate": "segment", "value_field": "customer.segment", "required": False},
                ],
            },
            {
                "event_type": "account.policy_attached",
                "subject": {"field": "account_id", "type": "Account"},
                "facts": [
                    {"predicate": "covered_by", "object": {"field": "policy_id", "type": "Policy"}},
                    {
                        "predicate": "coverage_amount",
                        "subject": {"field": "policy_id", "type": "Policy"},
                        "value_field": "coverage",
                    },
                ],
            },
            {
                "event_type": "customer.tier_changed",
                "subject": {"field": "customer_id", "type": "Customer"},
                "valid_from_field": "changed_at",
                "facts": [{"predicate": "tier", "value_field": "tier"}],
            },
        ],
    }
)


def event(
    service: MemoryService, tenant: str, eid: str, content: dict[str, Any], at: datetime = T0
) -> Any:
    ep, _ = service.add_episode(
        tenant_id=tenant,
        body=EpisodeCreate(episode_id=eid, kind=EpisodeKind.EVENT, content=content, occurred_at=at),
    )
    return on_episode_created(service, None, ep, ExtractMode.SYNC, settings=settings())


def test_events_map_to_typed_facts_without_a_model(service: MemoryService, tenant: str) -> None:
    service.put_schema(tenant_id=tenant, schema=BANK)
    opened = event(
        service,
        tenant,
        "ev1",
        {
            "type": "customer.account_opened",
            "customer_id": "cust-7",
            "account_id": "acct-1",
            "opened_at": "2026-01-01T00:00:00Z",
        },
    )
    attached = event(
        service,
        tenant,
        "ev2",
        {
            "type": "account.policy_attached",
            "account_id": "acct-1",
            "policy_id": "pol-9",
            "coverage": "250000",
        },
    )
    assert (opened.status, opened.extractor, opened.model_calls) == ("extracted", "mapper", 0)
    assert attached.status == "extracted"
    assert opened.rejected == []  # the optional segment field was simply absent
    got = sorted(
        (
            f.subject,
            f.subject_type,
            f.predicate,
            f.value,
            f.object,
            f.object_type,
            f.source_episode_id,
        )
        for f in service.facts(tenant_id=tenant)
    )
    assert got == [
        ("acct-1", "Account", "account_status", "open", None, None, "ev1"),
        ("acct-1", "Account", "covered_by", None, "pol-9", "Policy", "ev2"),
        ("cust-7", "Customer", "holds_account", None, "acct-1", "Account", "ev1"),
        ("pol-9", "Policy", "coverage_amount", 250000, None, None, "ev2"),  # typed number
    ]
    held = service.facts(tenant_id=tenant, subject="cust-7", predicate="holds_account")
    assert held[0].valid_from == datetime(2026, 1, 1, tzinfo=UTC)  # from opened_at


def test_tier_changes_supersede_through_the_temporal_core(
    service: MemoryService, tenant: str
) -> None:
    service.put_schema(tenant_id=tenant, schema=BANK)
    for eid, tier, day in (("t1", "silver", 1), ("t2", "gold", 20)):
        event(
            service,
            tenant,
            eid,
            {
                "type": "customer.tier_changed",
                "customer_id": "cust-7",
                "tier": tier,
                "changed_at": f"2026-02-{day:02d}T00:00:00Z",
            },
        )
    history = service.history(tenant_id=tenant, subject="cust-7", predicate="tier")
    assert [
        (f.value, f.valid_from.day, f.valid_to.day if f.valid_to else None) for f in history
    ] == [
        ("silver", 1, 20),
        ("gold", 20, None),
    ]


def test_missing_event_field_is_rejected_with_the_reason(
    service: MemoryService, tenant: str
) -> None:
    service.put_schema(tenant_id=tenant, schema=BANK)
    report = event(
        service,
        tenant,
        "ev1",
        {
            "type": "customer.tier_changed",
            "customer_id": "cust-7",
            "changed_at": "2026-02-01T00:00:00Z",
        },
    )
    assert report.status == "extracted"
    stored = service.get_episode(tenant_id=tenant, episode_id="ev1")
    assert [(r["reason"], r["stage"]) for r in stored.rejected] == [
        ("event field 'tier' is missing", "mapping")
    ]
    assert service.facts(tenant_id=tenant) == []


def test_unmapped_event_without_a_model_fails_visibly(service: MemoryService, tenant: str) -> None:
    service.put_schema(tenant_id=tenant, schema=BANK)
    report = event(service, tenant, "ev1", {"type": "customer.deleted", "customer_id": "c"})
    assert report.status == "failed"
    stored = service.get_episode(tenant_id=tenant, episode_id="ev1")
    assert stored.last_error is not None
    assert "no event mapping" in stored.last_error


# -- policy ------------------------------------------------------------------------------

POLICY = MemorySchema(
    entity_types=[EntityTypeSpec(name="Person")],
    predicates=[
        PredicateSpec(name="home_address", value_type="string", requires_confirmation=True),  # type: ignore[arg-type]
        PredicateSpec(name="prefers", value_type="string", memory_type="preference", min_support=2),  # type: ignore[arg-type]
    ],
)


def said(
    service: MemoryService,
    tenant: str,
    model: LlmExtractor,
    eid: str,
    day: int = 0,
    **overrides: Any,
) -> Any:
    ep, _ = service.add_episode(
        tenant_id=tenant,
        body=EpisodeCreate(episode_id=eid, content="...", occurred_at=T0 + timedelta(days=day)),
    )
    return on_episode_created(service, model, ep, ExtractMode.SYNC, settings=settings(**overrides))


def test_confirmation_holds_the_candidate_until_confirmed(
    service: MemoryService, tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    service.put_schema(tenant_id=tenant, schema=POLICY)
    llm.script(answer([fact(predicate="home_address", value="1 Rue Haute")]))
    report = said(service, tenant, model, "e1")
    assert report.facts == []
    assert service.facts(tenant_id=tenant) == []
    assert [(p.status, p.reason, p.delta.value) for p in report.pending] == [
        ("pending", "requires_confirmation", "1 Rue Haute")
    ]
    queue = service.store.queue
    listed = queue.candidates(
        tenant_id=tenant, status=CandidateStatus.PENDING, episode_id=None, limit=10
    )
    assert [c.candidate_id for c in listed] == [report.pending[0].candidate_id]
    confirmed, facts = confirm_candidate(
        service, tenant_id=tenant, candidate_id=listed[0].candidate_id
    )
    assert confirmed.status == CandidateStatus.CONFIRMED
    assert [(f.value, f.source_episode_id, f.valid_from) for f in facts] == [
        ("1 Rue Haute", "e1", T0)
    ]
    with pytest.raises(ConflictError, match="confirmed, not pending"):
        reject_candidate(service, tenant_id=tenant, candidate_id=confirmed.candidate_id)


def test_rejected_candidate_is_never_written(
    service: MemoryService, tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    service.put_schema(tenant_id=tenant, schema=POLICY)
    llm.script(answer([fact(predicate="home_address", value="nowhere")]))
    pending = said(service, tenant, model, "e1").pending[0]
    out = reject_candidate(
        service, tenant_id=tenant, candidate_id=pending.candidate_id, note="wrong"
    )
    assert (out.status, out.note) == (CandidateStatus.REJECTED, "wrong")
    with pytest.raises(ConflictError):
        confirm_candidate(service, tenant_id=tenant, candidate_id=pending.candidate_id)
    assert service.facts(tenant_id=tenant) == []


def test_recurrence_makes_a_preference_a_fact_at_the_second_episode(
    service: MemoryService, tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    service.put_schema(tenant_id=tenant, schema=POLICY)
    concise = fact(predicate="prefers", value="concise answers")
    llm.script(answer([concise]), answer([concise]))
    first = said(service, tenant, model, "e1", day=0)
    assert (first.facts, len(first.pending)) == ([], 1)
    second = said(service, tenant, model, "e2", day=3)
    assert second.pending == []
    [written] = service.facts(tenant_id=tenant, predicate="prefers")
    assert (written.value, written.memory_type, written.valid_from) == (
        "concise answers",
        "preference",
        T0 + timedelta(days=3),
    )
    assert (written.source_episode_id, sorted(written.sources)) == ("e2", ["e1", "e2"])
    queue = service.store.queue
    statuses = {
        c.episode_id: c.status
        for c in queue.candidates(tenant_id=tenant, status=None, episode_id=None, limit=10)
    }
    assert statuses == {"e1": CandidateStatus.PROMOTED, "e2": CandidateStatus.PROMOTED}


def test_one_episode_repeating_itself_is_not_recurrence(
    service: MemoryService, tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    service.put_schema(tenant_id=tenant, schema=POLICY)
    concise = fact(predicate="prefers", value="concise answers")
    llm.script(answer([concise, concise]))
    report = said(service, tenant, model, "e1")
    assert report.facts == []
    assert len(report.pending) == 2
    assert report.pending[0].candidate_id == report.pending[1].candidate_id  # stored once


# -- entity resolution -------------------------------------------------------------------


def test_names_resolve_to_known_entities_and_near_duplicates_become_merge_candidates(
    service: MemoryService, tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    service.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id="e0", content="x", occurred_at=T0)
    )
    service.write_facts(
        tenant_id=tenant,
        deltas=[
            MemoryDelta(
                subject="Mira Patel",
                subject_type="Person",
                predicate="city",
                value="Lyon",
                source_episode_id="e0",
            )
        ],
    )
    llm.script(
        answer(
            [
                fact(subject="mira  PATEL", predicate="employer", value="Acme"),
                fact(subject="Mira Patell", predicate="employer", value="Initech"),
                fact(subject="Mira Patil", subject_type="Company", predicate="sector", value="x"),
            ]
        )
    )
    report = said(service, tenant, model, "e1")
    got = sorted((f.subject, f.predicate, f.value) for f in report.facts)
    assert got == [
        ("Mira Patel", "employer", "Acme"),  # same normalised name: the known entity
        ("Mira Patell", "employer", "Initech"),  # a new entity, not merged silently
        ("Mira Patil", "sector", "x"),
    ]
    [mc] = report.merge_candidates  # the Company is another type: no candidate
    assert (mc.entity_id, mc.existing_entity_id, mc.entity_type) == (
        "Mira Patell",
        "Mira Patel",
        "Person",
    )
    assert 0.88 <= mc.similarity < 1.0
    queue = service.store.queue
    listed = queue.merge_candidates(tenant_id=tenant, status=MergeStatus.OPEN, limit=10)
    assert [m.candidate_id for m in listed] == [mc.candidate_id]

    accepted = decide_merge_candidate(
        service, tenant_id=tenant, candidate_id=mc.candidate_id, accept=True
    )
    assert accepted.status == MergeStatus.ACCEPTED
    entity = service.store.entity(tenant_id=tenant, entity_id="Mira Patel")
    assert entity is not None
    assert entity.aliases == ["Mira Patell"]
    llm.script(answer([fact(subject="Mira Patell", predicate="employer", value="Globex")]))
    later = said(service, tenant, model, "e2", day=1)
    assert [(f.subject, f.value) for f in later.facts] == [("Mira Patel", "Globex")]
    with pytest.raises(ConflictError):
        decide_merge_candidate(
            service, tenant_id=tenant, candidate_id=mc.candidate_id, accept=False
        )


def test_supporters_arriving_together_promote_the_statement_exactly_once(
    service: MemoryService, tenant: str
) -> None:
    """Two workers hold the 2nd and 3rd support of one statement at the same moment
    (min_support 3): exactly one of them promotes, and each supporter is written once."""
    from extraction.policy import apply_policy

    schema = MemorySchema(
        predicates=[PredicateSpec(name="prefers", value_type="string", min_support=3)]  # type: ignore[arg-type]
    )
    queue = service.store.queue
    for eid in ("e1", "e2", "e3"):
        service.add_episode(
            tenant_id=tenant, body=EpisodeCreate(episode_id=eid, content=".", occurred_at=T0)
        )

    def hold(eid: str) -> list[str]:
        d = MemoryDelta(
            subject="mira", predicate="prefers", value="tea", valid_from=T0, source_episode_id=eid
        )
        out = apply_policy(queue, schema, tenant_id=tenant, episode_id=eid, deltas=[d], now=T0)
        return [k.episode_id for k in out.promoted]

    assert hold("e1") == []
    barrier = threading.Barrier(2)
    results: dict[str, list[str]] = {}

    def run(eid: str) -> None:
        barrier.wait()
        results[eid] = hold(eid)

    threads = [threading.Thread(target=run, args=(e,)) for e in ("e2", "e3")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    promoted = sorted(e for got in results.values() for e in got)
    assert promoted == ["e1", "e2", "e3"]  # all three, by exactly one of the two workers
    assert sorted(len(got) for got in results.values()) == [0, 3]


def test_names_resolve_to_entities_older_than_one_catalog_page(
    service: MemoryService, tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    """Review M8: resolution is not limited to the newest page of the catalog."""
    service.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id="e0", content="x", occurred_at=T0)
    )
    for name in ("Mira Patel", "Ann", "Bob", "Cid", "Dee"):  # Mira is the oldest
        service.write_facts(
            tenant_id=tenant,
            deltas=[
                MemoryDelta(
                    subject=name,
                    subject_type="Person",
                    predicate="city",
                    value="Lyon",
                    source_episode_id="e0",
                )
            ],
        )
    llm.script(answer([fact(subject="mira  PATEL", predicate="employer", value="Acme")]))
    report = said(service, tenant, model, "e1", catalog_limit=2)
    assert [(f.subject, f.value) for f in report.facts] == [("Mira Patel", "Acme")]
    assert service.store.entity(tenant_id=tenant, entity_id="mira  PATEL") is None
