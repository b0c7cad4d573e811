"""The store contract: the same tests run on SQLite and on Neo4j (the ``store`` fixture).

Everything goes through MemoryService, so what is checked is the behaviour users get.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graph.errors import ConflictError, FactConflictError, NotFoundError, ValidationError
from graph.model import (
    ConflictPolicy,
    Direction,
    EpisodeCreate,
    MemoryDelta,
    ValueType,
    WriteStatus,
)
from graph.port import Store
from graph.schema import MemorySchema, PredicateSpec
from graph.service import MemoryService
from graph.timeutil import utcnow

T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)


def t(days: float) -> datetime:
    return T0 + timedelta(days=days)


def episode(
    svc: MemoryService, tenant: str, eid: str, at: datetime = T0, content: str = "x"
) -> None:
    svc.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id=eid, content=content, occurred_at=at)
    )


def deadline(value: str, start: datetime, ep: str, **kw: object) -> MemoryDelta:
    return MemoryDelta(
        subject="mira",
        subject_type="Person",
        predicate="passport_deadline",
        value=value,
        valid_from=start,
        source_episode_id=ep,
        **kw,  # type: ignore[arg-type]
    )


def values_at(
    svc: MemoryService, tenant: str, at: datetime, known_at: datetime | None = None
) -> list[tuple[object, str | None]]:
    facts = svc.facts(
        tenant_id=tenant, subject="mira", predicate="passport_deadline", as_of=at, known_at=known_at
    )
    return [(f.value, f.source_episode_id) for f in facts]


def history(
    svc: MemoryService, tenant: str, known_at: datetime | None = None
) -> list[tuple[object, datetime, datetime | None, str | None]]:
    return [
        (f.value, f.valid_from, f.valid_to, f.source_episode_id)
        for f in svc.history(
            tenant_id=tenant, subject="mira", predicate="passport_deadline", known_at=known_at
        )
    ]


@pytest.fixture
def mira(service: MemoryService, tenant: str) -> MemoryService:
    """The seed's example: e1 then a correction e2, then a late older fact e0."""
    for eid, at in (("e1", t(0)), ("e2", t(2)), ("e0", t(-2))):
        episode(service, tenant, eid, at)
    service.write_facts(tenant_id=tenant, deltas=[deadline("2026-07-15", t(0), "e1")])
    service.write_facts(tenant_id=tenant, deltas=[deadline("2026-06-30", t(2), "e2")])
    service.write_facts(tenant_id=tenant, deltas=[deadline("2026-08-01", t(-2), "e0")])
    return service


def test_current_and_as_of_answers(mira: MemoryService, tenant: str) -> None:
    assert values_at(mira, tenant, utcnow()) == [("2026-06-30", "e2")]
    assert values_at(mira, tenant, t(1)) == [("2026-07-15", "e1")]
    assert values_at(mira, tenant, t(-1)) == [("2026-08-01", "e0")]
    assert values_at(mira, tenant, t(-3)) == []


def test_history_is_ordered_and_contiguous(mira: MemoryService, tenant: str) -> None:
    assert history(mira, tenant) == [
        ("2026-08-01", t(-2), t(0), "e0"),
        ("2026-07-15", t(0), t(2), "e1"),
        ("2026-06-30", t(2), None, "e2"),
    ]


def test_query_exactly_at_valid_to_gets_the_next_value(mira: MemoryService, tenant: str) -> None:
    assert values_at(mira, tenant, t(2)) == [("2026-06-30", "e2")]
    assert values_at(mira, tenant, t(2) - timedelta(microseconds=1)) == [("2026-07-15", "e1")]


def test_supersedes_names_the_cut_fact(mira: MemoryService, tenant: str) -> None:
    facts = mira.history(tenant_id=tenant, subject="mira", predicate="passport_deadline")
    by_source = {f.source_episode_id: f for f in facts}
    assert by_source["e2"].supersedes == [by_source["e1"].fact_id]
    assert by_source["e0"].supersedes == []  # late fact: ends where the next begins, cuts nothing


def test_known_at_reproduces_earlier_beliefs(service: MemoryService, tenant: str) -> None:
    episode(service, tenant, "e1")
    episode(service, tenant, "e2", t(2))
    service.write_facts(tenant_id=tenant, deltas=[deadline("2026-07-15", t(0), "e1")])
    between = utcnow()
    service.write_facts(tenant_id=tenant, deltas=[deadline("2026-06-30", t(2), "e2")])
    # Before e2 was recorded the service believed e1's value held on, open-ended.
    assert values_at(service, tenant, t(5), known_at=between) == [("2026-07-15", "e1")]
    assert history(service, tenant, known_at=between) == [("2026-07-15", t(0), None, "e1")]
    assert values_at(service, tenant, t(5)) == [("2026-06-30", "e2")]


def test_bounded_fact_replaces_exactly_its_portion(service: MemoryService, tenant: str) -> None:
    episode(service, tenant, "e1")
    episode(service, tenant, "e2", t(3))
    service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(0), "e1")])
    service.write_facts(tenant_id=tenant, deltas=[deadline("B", t(3), "e2", valid_to=t(5))])
    assert history(service, tenant) == [
        ("A", t(0), t(3), "e1"),
        ("B", t(3), t(5), "e2"),
        ("A", t(5), None, "e1"),
    ]
    assert values_at(service, tenant, t(4)) == [("B", "e2")]
    assert values_at(service, tenant, t(5)) == [("A", "e1")]
    ids = [
        f.fact_id
        for f in service.history(tenant_id=tenant, subject="mira", predicate="passport_deadline")
    ]
    assert len(set(ids)) == 3  # the resumed piece is an interval of its own


def test_equal_valid_from_is_rejected_naming_both_sources(
    service: MemoryService, tenant: str
) -> None:
    episode(service, tenant, "e1")
    episode(service, tenant, "e2")
    first = service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(0), "e1")]).facts[0]
    with pytest.raises(FactConflictError) as info:
        service.write_facts(tenant_id=tenant, deltas=[deadline("B", t(0), "e2")])
    assert info.value.conflicting_fact_id == first.fact_id
    assert info.value.conflicting_source_episode_id == "e1"
    assert info.value.source_episode_id == "e2"
    assert "e1" in str(info.value)
    assert "e2" in str(info.value)
    assert history(service, tenant) == [("A", t(0), None, "e1")]


def test_latest_recorded_wins(service: MemoryService, tenant: str) -> None:
    episode(service, tenant, "e1")
    episode(service, tenant, "e2")
    service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(0), "e1")])
    r = service.write_facts(
        tenant_id=tenant,
        deltas=[deadline("B", t(0), "e2")],
        policy=ConflictPolicy.LATEST_RECORDED_WINS,
    )
    assert r.outcomes == [WriteStatus.CREATED]
    assert history(service, tenant) == [("B", t(0), None, "e2")]


@pytest.mark.parametrize(("confidence", "winner"), [(0.9, "B"), (0.5, "A"), (0.7, "A")])
def test_highest_confidence_wins(
    service: MemoryService, tenant: str, confidence: float, winner: str
) -> None:
    episode(service, tenant, "e1")
    episode(service, tenant, "e2")
    service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(0), "e1", confidence=0.7)])
    r = service.write_facts(
        tenant_id=tenant,
        deltas=[deadline("B", t(0), "e2", confidence=confidence)],
        policy=ConflictPolicy.HIGHEST_CONFIDENCE_WINS,
    )
    assert r.outcomes == [WriteStatus.CREATED if winner == "B" else WriteStatus.KEPT_EXISTING]
    assert [v for v, *_ in history(service, tenant)] == [winner]
    assert r.facts[0].value == winner


def test_identical_redelivery_is_a_no_op(service: MemoryService, tenant: str) -> None:
    episode(service, tenant, "e1")
    first = service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(0), "e1")])
    after_first = utcnow()
    again = service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(0), "e1")])
    assert again.outcomes == [WriteStatus.UNCHANGED]
    assert again.facts[0].fact_id == first.facts[0].fact_id
    assert again.facts[0].version_id == first.facts[0].version_id
    assert again.facts[0].recorded_at < after_first  # no new version was written


def test_same_statement_from_another_episode_corroborates(
    service: MemoryService, tenant: str
) -> None:
    episode(service, tenant, "e1")
    episode(service, tenant, "e2")
    service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(0), "e1")])
    r = service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(0), "e2")])
    assert r.outcomes == [WriteStatus.CORROBORATED]
    assert r.facts[0].sources == ["e1", "e2"]
    # Deleting one source keeps what the other still asserts.
    service.delete_episode(tenant_id=tenant, episode_id="e1")
    facts = service.facts(tenant_id=tenant, subject="mira", as_of=t(1))
    assert [(f.value, f.sources) for f in facts] == [("A", ["e2"])]


def test_retraction_ends_validity_without_replacement(service: MemoryService, tenant: str) -> None:
    episode(service, tenant, "e1")
    fact = service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(0), "e1")]).facts[0]
    ended = service.retract(tenant_id=tenant, fact_id=fact.fact_id, valid_to=t(4))
    assert ended.valid_to == t(4)
    assert values_at(service, tenant, t(3)) == [("A", "e1")]
    assert values_at(service, tenant, t(4)) == []
    # A later fact in the gap runs open: nothing follows it.
    episode(service, tenant, "e3", t(6))
    service.write_facts(tenant_id=tenant, deltas=[deadline("C", t(6), "e3")])
    assert history(service, tenant) == [("A", t(0), t(4), "e1"), ("C", t(6), None, "e3")]


def test_retraction_errors(service: MemoryService, tenant: str) -> None:
    episode(service, tenant, "e1")
    fact = service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(1), "e1")]).facts[0]
    with pytest.raises(ValidationError, match="after the fact's valid_from"):
        service.retract(tenant_id=tenant, fact_id=fact.fact_id, valid_to=t(0))
    with pytest.raises(NotFoundError):
        service.retract(tenant_id=tenant, fact_id="f_missing", valid_to=t(3))
    assert history(service, tenant) == [("A", t(1), None, "e1")]


def test_deleting_an_episode_restores_what_it_cut(mira: MemoryService, tenant: str) -> None:
    result = mira.delete_episode(tenant_id=tenant, episode_id="e2")
    assert (result.facts_removed, result.facts_restored) == (1, 1)
    assert values_at(mira, tenant, utcnow()) == [("2026-07-15", "e1")]
    assert history(mira, tenant) == [
        ("2026-08-01", t(-2), t(0), "e0"),
        ("2026-07-15", t(0), None, "e1"),
    ]
    with pytest.raises(NotFoundError):
        mira.get_episode(tenant_id=tenant, episode_id="e2")


def test_deletion_is_real_at_every_known_at(service: MemoryService, tenant: str) -> None:
    episode(service, tenant, "e1")
    episode(service, tenant, "e2", t(2))
    service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(0), "e1")])
    service.write_facts(tenant_id=tenant, deltas=[deadline("B", t(2), "e2")])
    while_believed = utcnow()
    service.delete_episode(tenant_id=tenant, episode_id="e2")
    # e2's fact is gone even from what the service "believed" before the deletion.
    assert all(src != "e2" for *_, src in history(service, tenant, known_at=while_believed))
    assert values_at(service, tenant, t(3), known_at=while_believed) == []


def test_deleting_the_middle_episode_of_a_bounded_split(
    service: MemoryService, tenant: str
) -> None:
    episode(service, tenant, "e1")
    episode(service, tenant, "e2", t(3))
    service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(0), "e1")])
    service.write_facts(tenant_id=tenant, deltas=[deadline("B", t(3), "e2", valid_to=t(5))])
    service.delete_episode(tenant_id=tenant, episode_id="e2")
    assert history(service, tenant) == [("A", t(0), None, "e1")]


def test_many_valued_relations_are_separate_timelines(service: MemoryService, tenant: str) -> None:
    episode(service, tenant, "e9")
    deltas = [
        MemoryDelta(
            subject="cust-7",
            subject_type="Customer",
            predicate="holds_account",
            object=acct,
            object_type="Account",
            valid_from=t(0),
            source_episode_id="e9",
        )
        for acct in ("acct-1", "acct-2")
    ]
    written = service.write_facts(tenant_id=tenant, deltas=deltas).facts
    assert {f.object for f in service.facts(tenant_id=tenant, subject="cust-7")} == {
        "acct-1",
        "acct-2",
    }
    service.retract(tenant_id=tenant, fact_id=written[0].fact_id, valid_to=t(2))
    assert [f.object for f in service.facts(tenant_id=tenant, subject="cust-7")] == ["acct-2"]
    assert {f.object for f in service.facts(tenant_id=tenant, subject="cust-7", as_of=t(1))} == {
        "acct-1",
        "acct-2",
    }
    assert written[0].value_type == ValueType.ENTITY


def test_neighbors_follow_only_relations_valid_at_the_time(
    service: MemoryService, tenant: str
) -> None:
    episode(service, tenant, "e1")

    def rel(
        s: str, st: str, p: str, o: str, ot: str, start: float, end: float | None = None
    ) -> MemoryDelta:
        return MemoryDelta(
            subject=s,
            subject_type=st,
            predicate=p,
            object=o,
            object_type=ot,
            valid_from=t(start),
            valid_to=t(end) if end is not None else None,
            source_episode_id="e1",
        )

    service.write_facts(
        tenant_id=tenant,
        deltas=[
            rel("cust-7", "Customer", "holds_account", "acct-1", "Account", 0),
            rel("acct-1", "Account", "covered_by", "pol-1", "Policy", 0, 10),
            rel("acct-1", "Account", "covered_by", "pol-2", "Policy", 10),
            rel("cust-7", "Customer", "holds_account", "acct-old", "Account", -5, -1),
            # An attribute is not an edge: it never joins a neighbourhood.
            MemoryDelta(
                subject="cust-7",
                predicate="tier",
                value="gold",
                valid_from=t(0),
                source_episode_id="e1",
            ),
        ],
    )
    hood = service.neighbors(tenant_id=tenant, entity_id="cust-7", depth=2, as_of=t(5))
    assert {e.entity_id for e in hood.entities} == {"cust-7", "acct-1", "pol-1"}
    assert sorted((f.subject, f.predicate, f.object) for f in hood.facts) == [
        ("acct-1", "covered_by", "pol-1"),
        ("cust-7", "holds_account", "acct-1"),
    ]
    later = service.neighbors(tenant_id=tenant, entity_id="cust-7", depth=2, as_of=t(11))
    assert {e.entity_id for e in later.entities} == {"cust-7", "acct-1", "pol-2"}
    one_hop = service.neighbors(tenant_id=tenant, entity_id="cust-7", depth=1, as_of=t(5))
    assert {e.entity_id for e in one_hop.entities} == {"cust-7", "acct-1"}
    inbound = service.neighbors(
        tenant_id=tenant, entity_id="pol-1", depth=2, as_of=t(5), direction=Direction.IN
    )
    assert {e.entity_id for e in inbound.entities} == {"pol-1", "acct-1", "cust-7"}
    outbound_only = service.neighbors(
        tenant_id=tenant, entity_id="pol-1", depth=2, as_of=t(5), direction=Direction.OUT
    )
    assert {e.entity_id for e in outbound_only.entities} == {"pol-1"}
    ent, facts = service.entity(tenant_id=tenant, entity_id="acct-1", as_of=t(5))
    assert ent.entity_type == "Account"
    assert {(f.subject, f.object) for f in facts} == {("acct-1", "pol-1"), ("cust-7", "acct-1")}


BAD_ITEMS = [
    ({"value": "A", "object": "x"}, "value"),
    ({"value": "A", "valid_to": T0 - timedelta(days=1)}, "valid_to"),
    ({"value": "A", "valid_to": T0}, "valid_to"),
    ({"value": "A", "source_episode_id": "nope"}, "source_episode_id"),
]


@pytest.mark.parametrize(("item", "field"), BAD_ITEMS)
def test_bad_items_name_field_and_index_and_write_nothing(
    service: MemoryService, tenant: str, item: dict[str, object], field: str
) -> None:
    episode(service, tenant, "e1")
    good = deadline("OK", t(0), "e1")
    bad = MemoryDelta.model_validate(
        {
            "subject": "mira",
            "predicate": "passport_deadline",
            "valid_from": T0,
            "source_episode_id": "e1",
            **item,
        }
    )
    with pytest.raises(ValidationError) as info:
        service.write_facts(tenant_id=tenant, deltas=[good, bad])
    assert any(e.index == 1 and e.field == field for e in info.value.errors), info.value.errors
    assert history(service, tenant) == []
    assert service.store.entity(tenant_id=tenant, entity_id="mira") is None


def test_strict_schema_refuses_unknown_predicates_and_wrong_types(
    service: MemoryService, tenant: str
) -> None:
    episode(service, tenant, "e1")
    schema = service.put_schema(
        tenant_id=tenant,
        schema=MemorySchema(
            mode="strict",
            entity_types=[{"name": "Person"}],  # type: ignore[list-item]
            predicates=[PredicateSpec(name="passport_deadline", value_type=ValueType.DATE)],
        ),
    )
    assert schema.version == 1
    with pytest.raises(ValidationError) as info:
        service.write_facts(
            tenant_id=tenant,
            deltas=[
                deadline("2026-07-15", t(0), "e1"),
                MemoryDelta(
                    subject="mira",
                    predicate="favourite_colour",
                    value="red",
                    valid_from=t(0),
                    source_episode_id="e1",
                ),
                deadline("next tuesday", t(1), "e1"),
            ],
        )
    reasons = {(e.index, e.field) for e in info.value.errors}
    assert reasons == {(1, "predicate"), (2, "value")}
    assert history(service, tenant) == []
    ok = service.write_facts(tenant_id=tenant, deltas=[deadline("2026-07-15", t(0), "e1")])
    assert ok.facts[0].schema_version == 1
    assert ok.facts[0].value_type == ValueType.DATE


def test_entity_types_are_never_silently_changed(service: MemoryService, tenant: str) -> None:
    episode(service, tenant, "e1")
    service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(0), "e1")])
    with pytest.raises(ValidationError, match="is a Person, not a Customer"):
        service.write_facts(
            tenant_id=tenant,
            deltas=[
                MemoryDelta(
                    subject="mira",
                    subject_type="Customer",
                    predicate="tier",
                    value="gold",
                    valid_from=t(0),
                    source_episode_id="e1",
                )
            ],
        )


def test_episode_idempotency(service: MemoryService, tenant: str) -> None:
    body = EpisodeCreate(episode_id="e1", content="hello", occurred_at=T0)
    first, created = service.add_episode(tenant_id=tenant, body=body)
    again, created_again = service.add_episode(tenant_id=tenant, body=body)
    assert (created, created_again) == (True, False)
    assert again.recorded_at == first.recorded_at
    with pytest.raises(ConflictError):
        service.add_episode(
            tenant_id=tenant, body=EpisodeCreate(episode_id="e1", content="other", occurred_at=T0)
        )
    assert service.get_episode(tenant_id=tenant, episode_id="e1").content == "hello"


def test_episode_lists_the_facts_it_sourced(mira: MemoryService, tenant: str) -> None:
    facts = mira.episode_facts(tenant_id=tenant, episode_id="e1")
    assert [(f.value, f.valid_to) for f in facts] == [("2026-07-15", t(2))]


def test_tenants_never_see_each_other(service: MemoryService, tenant: str) -> None:
    other = tenant + "-b"
    try:
        episode(service, tenant, "e1")
        episode(service, other, "e1", content="other tenant")
        service.write_facts(tenant_id=tenant, deltas=[deadline("A", t(0), "e1")])
        assert service.facts(tenant_id=other, subject="mira", as_of=t(1)) == []
        assert service.history(tenant_id=other, subject="mira", predicate="passport_deadline") == []
        with pytest.raises(NotFoundError):
            service.entity(tenant_id=other, entity_id="mira")
        service.delete_episode(tenant_id=other, episode_id="e1")
        assert values_at(service, tenant, t(1)) == [("A", "e1")]
        assert service.get_episode(tenant_id=tenant, episode_id="e1").content == "x"
    finally:
        service.store.purge_tenant(tenant_id=other)


def test_pagination_walks_every_fact_once(service: MemoryService, tenant: str) -> None:
    episode(service, tenant, "e1")
    service.write_facts(
        tenant_id=tenant,
        deltas=[
            MemoryDelta(
                subject=f"s{i:02d}",
                predicate="score",
                value=i,
                valid_from=t(0),
                source_episode_id="e1",
            )
            for i in range(25)
        ],
    )
    seen: list[str] = []
    after = None
    while True:
        page = service.facts(tenant_id=tenant, predicate="score", limit=10, after=after)
        seen += [f.subject for f in page]
        if len(page) < 10:
            break
        last = page[-1]
        after = (last.subject, last.predicate, last.fact_id)
    assert seen == [f"s{i:02d}" for i in range(25)]


def test_schema_versions_increment(service: MemoryService, tenant: str) -> None:
    assert service.schema(tenant_id=tenant).mode == "permissive"
    s1 = service.put_schema(tenant_id=tenant, schema=MemorySchema(mode="strict"))
    s2 = service.put_schema(tenant_id=tenant, schema=MemorySchema(mode="permissive"))
    assert (s1.version, s2.version) == (1, 2)
    assert service.schema(tenant_id=tenant).version == 2


def test_one_batch_may_settle_its_own_equal_start_conflict(
    service: MemoryService, tenant: str
) -> None:
    episode(service, tenant, "e1")
    r = service.write_facts(
        tenant_id=tenant,
        deltas=[deadline("A", t(0), "e1"), deadline("B", t(0), "e1")],
        policy=ConflictPolicy.LATEST_RECORDED_WINS,
    )
    assert r.outcomes == [WriteStatus.CREATED, WriteStatus.CREATED]
    assert [f.value for f in r.facts] == ["A", "B"]
    assert r.facts[0].retired_at is not None  # replaced within the batch: never current
    assert r.facts[1].retired_at is None
    assert history(service, tenant) == [("B", t(0), None, "e1")]
    with pytest.raises(FactConflictError) as info:
        service.write_facts(
            tenant_id=tenant, deltas=[deadline("C", t(1), "e1"), deadline("D", t(1), "e1")]
        )
    assert info.value.index == 1
    assert history(service, tenant) == [("B", t(0), None, "e1")]


def test_a_write_reads_only_what_its_facts_can_change(
    store: Store, service: MemoryService, tenant: str
) -> None:
    """``current_versions(since=…)`` returns the versions whose validity ends after
    ``since`` or never (half-open: one that ends exactly then is left out), and a write
    reads no more: facts placed late, at the boundary and before everything still land
    where the whole timeline would put them."""
    episode(service, tenant, "e1")
    service.write_facts(tenant_id=tenant, deltas=[deadline(f"v{i}", t(i), "e1") for i in range(10)])
    key = '["mira","passport_deadline"]'

    def read(since: datetime | None) -> list[object]:
        with store.transaction() as tx:
            tx.lock_timelines(tenant_id=tenant, keys=[key], since=since)
            got = tx.current_versions(tenant_id=tenant, keys=[key], since=since)
            # Asked again with another bound: read again, not the locked answer.
            again = tx.current_versions(tenant_id=tenant, keys=[key], since=None)
        assert len(again[key]) == 10
        return [f.value for f in got[key]]

    assert read(None) == [f"v{i}" for i in range(10)]
    assert read(t(7)) == ["v7", "v8", "v9"]  # v6 ends at t(7): nothing after t(7) touches it
    assert read(t(6.5)) == ["v6", "v7", "v8", "v9"]
    assert read(t(20)) == ["v9"]  # the open one
    episode(service, tenant, "e2")
    # One write each: the first reads from t(6.5) (v6 holds it and is cut), the second
    # from t(-1) (before everything: it ends where v0 begins).
    service.write_facts(tenant_id=tenant, deltas=[deadline("late", t(6.5), "e2")])
    service.write_facts(tenant_id=tenant, deltas=[deadline("first", t(-1), "e2")])
    assert [(v, s, e) for v, s, e, _ in history(service, tenant)] == [
        ("first", t(-1), t(0)),
        *((f"v{i}", t(i), t(i + 1) if i != 6 else t(6.5)) for i in range(7)),
        ("late", t(6.5), t(7)),
        *((f"v{i}", t(i), t(i + 1) if i < 9 else None) for i in range(7, 10)),
    ]
