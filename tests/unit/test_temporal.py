"""The temporal core's rules, one by one, on pure data."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graph.errors import FactConflictError, ValidationError
from graph.model import Cardinality, ConflictPolicy, ValueType, WriteStatus
from graph.temporal import (
    Assertion,
    Claim,
    Interval,
    apply_assertion,
    check_invariants,
    derived_id,
    diff,
    fold,
    ledger_entry,
    retract,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
_seq = iter(range(1, 10_000))


def t(n: int) -> datetime:
    return T0 + timedelta(days=n)


def claim(value: str, confidence: float = 1.0) -> Claim:
    return Claim(
        subject="s",
        subject_type="Entity",
        predicate="p",
        value=value,
        value_type=ValueType.STRING,
        object=None,
        object_type=None,
        confidence=confidence,
        memory_type="semantic",
        schema_version=0,
        retention_policy="keep",
        cardinality=Cardinality.ONE,
    )


def put(
    value: str,
    start: int,
    end: int | None = None,
    src: str | None = None,
    policy: ConflictPolicy = ConflictPolicy.REJECT,
    confidence: float = 1.0,
    fid: str | None = None,
) -> Assertion:
    seq = next(_seq)
    return Assertion(
        seq=seq,
        kind="assert",
        fact_id=fid or f"f{value}{seq}",
        recorded_at=T0,
        valid_from=t(start),
        valid_to=t(end) if end is not None else None,
        claim=claim(value, confidence),
        source_episode_id=src or f"e{value}",
        policy=policy,
    )


def run(*assertions: Assertion) -> tuple[Interval, ...]:
    state: tuple[Interval, ...] = ()
    for a in assertions:
        state, _ = apply_assertion(state, a)
        check_invariants(state)
    return state


def shape(state: tuple[Interval, ...]) -> list[tuple[str | None, int, int | None]]:
    def day(d: datetime | None) -> int | None:
        return None if d is None else (d - T0).days

    return [(str(i.claim.value), (i.valid_from - T0).days, day(i.valid_to)) for i in state]


def test_open_fact_cuts_the_interval_it_falls_in_and_inherits_its_end() -> None:
    assert shape(run(put("A", 0), put("B", 5))) == [("A", 0, 5), ("B", 5, None)]
    # Inside a bounded interval: inherit its end, not "open".
    assert shape(run(put("A", 0, 10), put("B", 5))) == [("A", 0, 5), ("B", 5, 10)]


def test_late_fact_older_than_all_ends_where_the_next_begins() -> None:
    assert shape(run(put("A", 5), put("B", 0))) == [("B", 0, 5), ("A", 5, None)]


def test_open_fact_in_a_gap_ends_at_the_next_interval() -> None:
    state = run(put("A", 0, 3), put("C", 8))
    assert shape(run(put("A", 0, 3), put("C", 8), put("B", 5))) == [
        ("A", 0, 3),
        ("B", 5, 8),
        ("C", 8, None),
    ]
    # Exactly at the end of a closed interval is in the gap (half-open intervals).
    state, _ = apply_assertion(state, put("B", 3))
    assert shape(state) == [("A", 0, 3), ("B", 3, 8), ("C", 8, None)]


def test_bounded_fact_replaces_exactly_its_portion() -> None:
    a = put("A", 0)
    b = put("B", 3, 5)
    state = run(a, b)
    assert shape(state) == [("A", 0, 3), ("B", 3, 5), ("A", 5, None)]
    assert [i.fact_id for i in state] == [a.fact_id, b.fact_id, derived_id(a.fact_id, b.fact_id)]
    assert state[1].supersedes == (a.fact_id,)


def test_bounded_fact_spanning_several_intervals_trims_both_ends() -> None:
    state = run(put("A", 0), put("B", 4), put("C", 8), put("X", 2, 10))
    assert shape(state) == [("A", 0, 2), ("X", 2, 10), ("C", 10, None)]
    assert len(state[1].supersedes) == 3


def test_bounded_fact_before_everything_leaves_the_rest() -> None:
    assert shape(run(put("A", 5), put("B", 0, 2))) == [("B", 0, 2), ("A", 5, None)]


def test_equal_valid_from_rejected_by_default_naming_both_sources() -> None:
    first = run(put("A", 0, src="e1"))
    with pytest.raises(FactConflictError) as info:
        apply_assertion(first, put("B", 0, src="e2"), index=3)
    err = info.value
    assert (err.conflicting_source_episode_id, err.source_episode_id, err.index) == ("e1", "e2", 3)
    assert err.conflicting_fact_id == first[0].fact_id


def test_equal_valid_from_latest_recorded_wins() -> None:
    state = run(put("A", 0, 4), put("B", 0, policy=ConflictPolicy.LATEST_RECORDED_WINS))
    assert shape(state) == [("B", 0, 4)]


def test_equal_valid_from_bounded_winner_lets_the_rest_resume() -> None:
    a = put("A", 0)
    state = run(a, put("B", 0, 2, policy=ConflictPolicy.LATEST_RECORDED_WINS))
    assert shape(state) == [("B", 0, 2), ("A", 2, None)]
    assert state[1].fact_id == a.fact_id  # no left piece: the remainder keeps its id


@pytest.mark.parametrize(
    ("confidence", "status", "winner"),
    [
        (0.9, WriteStatus.CREATED, "B"),
        (0.5, WriteStatus.KEPT_EXISTING, "A"),
        (0.7, WriteStatus.KEPT_EXISTING, "A"),  # a tie keeps what is recorded
    ],
)
def test_highest_confidence_wins(confidence: float, status: WriteStatus, winner: str) -> None:
    state = run(put("A", 0, confidence=0.7))
    state, outcome = apply_assertion(
        state, put("B", 0, policy=ConflictPolicy.HIGHEST_CONFIDENCE_WINS, confidence=confidence)
    )
    assert outcome.status == status
    assert shape(state) == [(winner, 0, None)]


def test_redelivery_is_a_no_op_and_corroboration_adds_a_source() -> None:
    state = run(put("A", 0, src="e1"))
    same, outcome = apply_assertion(state, put("A", 0, src="e1"))
    assert outcome.status == WriteStatus.UNCHANGED
    assert same == state
    more, outcome = apply_assertion(state, put("A", 0, src="e2"))
    assert outcome.status == WriteStatus.CORROBORATED
    assert more[0].sources == ("e1", "e2")
    assert more[0].fact_id == state[0].fact_id


def retraction(fact_id: str, at: int) -> Assertion:
    return Assertion(
        seq=next(_seq), kind="retract", fact_id=fact_id, recorded_at=T0, valid_to=t(at)
    )


def recorded(*assertions: Assertion) -> tuple[tuple[Interval, ...], list[Assertion]]:
    """Apply each assertion as a write does; the state and the ledger entries it records."""
    state: tuple[Interval, ...] = ()
    entries: list[Assertion] = []
    for a in assertions:
        if a.kind == "retract":
            state = retract(state, fact_id=a.fact_id, at=a.valid_to)
            entries.append(a)
            continue
        state, outcome = apply_assertion(state, a)
        if outcome.status != WriteStatus.UNCHANGED:
            entries.append(ledger_entry(a, outcome))
    return state, entries


def test_corroborated_retracted_fact_stays_retracted_when_its_first_source_goes() -> None:
    """Review H1: the retraction names the fact id; the re-fold keeps that id."""
    e1, e2 = put("A", 0, src="e1", fid="fa"), put("A", 0, src="e2", fid="fb")
    state, entries = recorded(e1, e2, retraction("fa", 3))
    assert [(i.fact_id, i.sources) for i in state] == [("fa", ("e1", "e2"))]
    assert entries[1].fact_id == "fa"  # the corroboration is recorded under "fa"
    without_e1 = fold(a for a in entries if a.source_episode_id != "e1")
    assert shape(without_e1) == [("A", 0, 3)]
    assert [(i.fact_id, i.sources) for i in without_e1] == [("fa", ("e2",))]
    assert fold(entries) == state  # the full ledger still folds to what was written


def test_refold_of_a_corroboration_whose_fact_came_back_whole_gets_its_own_id() -> None:
    """X cut A's head, e2 then corroborated A's remainder at 2. Deleting X gives A back
    from 0, so e2's entry (recorded under A's id) no longer starts a fact: it cuts A at 2
    as any statement would, under an id of its own, never a second "fa"."""
    a, x = put("A", 0, src="e1", fid="fa"), put("X", -1, 2, src="e3", fid="fx")
    e2 = put("A", 2, src="e2", fid="fe")
    state, entries = recorded(a, x, e2)
    assert shape(state) == [("X", -1, 2), ("A", 2, None)]
    assert [(i.fact_id, i.sources) for i in state][1] == ("fa", ("e1", "e2"))
    refolded = fold(e for e in entries if e.source_episode_id != "e3")
    check_invariants(refolded)
    assert shape(refolded) == [("A", 0, 2), ("A", 2, None)]
    ids = [i.fact_id for i in refolded]
    assert ids[0] == "fa"
    assert ids[1] == derived_id("fa", f"#{entries[2].seq}")
    assert refolded[1].sources == ("e2",)
    assert fold(e for e in entries if e.source_episode_id != "e3") == refolded  # stable


def test_same_statement_with_another_end_is_a_bounded_write() -> None:
    """Review M3: restating with a valid_to replaces exactly that portion."""
    a = put("A", 0, src="e1", fid="fa")
    b = put("A", 0, 3, src="e2", fid="fb")
    state, outcome = apply_assertion(run(a), b)
    assert outcome.status == WriteStatus.CREATED
    assert shape(state) == [("A", 0, 3), ("A", 3, None)]
    assert [(i.fact_id, i.sources, i.supersedes) for i in state] == [
        ("fb", ("e2",), ("fa",)),
        ("fa", ("e1",), ()),
    ]
    # From the same episode with another end it is a write too, not a no-op.
    again, outcome = apply_assertion(run(a), put("A", 0, 3, src="e1", fid="fc"))
    assert outcome.status == WriteStatus.CREATED
    assert shape(again) == [("A", 0, 3), ("A", 3, None)]
    # The same portion again corroborates it; an open restatement corroborates whatever
    # interval starts there (placing it would give that interval back).
    same, outcome = apply_assertion(state, put("A", 0, 3, src="e3"))
    assert (outcome.status, outcome.fact_id, same[0].sources) == (
        WriteStatus.CORROBORATED,
        "fb",
        ("e2", "e3"),
    )
    opened, outcome = apply_assertion(state, put("A", 0, src="e3"))
    assert (outcome.status, outcome.fact_id) == (WriteStatus.CORROBORATED, "fb")
    assert shape(opened) == shape(state)


def test_retraction_ends_validity_and_refuses_impossible_ends() -> None:
    state = run(put("A", 0, fid="fa"))
    assert shape(retract(state, fact_id="fa", at=t(4))) == [("A", 0, 4)]
    bounded = run(put("B", 0, 5, fid="fb"))
    for bad in (t(0), t(-1), t(5), t(6)):
        with pytest.raises(ValidationError):
            retract(bounded, fact_id="fb", at=bad)
    with pytest.raises(ValidationError):
        retract(state, fact_id="missing", at=t(1))


def test_fold_equals_incremental_application() -> None:
    seq = [put("A", 0), put("B", 5), put("C", 2, 7), put("D", -3), put("E", 6)]
    assert fold(seq) == run(*seq)
    assert fold(reversed(seq)) == run(*seq)  # fold orders by seq, not by argument order


def test_fold_without_an_assertion_repairs_what_it_cut() -> None:
    a, b, c = put("A", 0), put("B", 5), put("C", 2, 7)
    assert shape(fold([a, c])) == [("A", 0, 2), ("C", 2, 7), ("A", 7, None)]
    assert shape(fold([a, b])) == [("A", 0, 5), ("B", 5, None)]
    assert shape(fold([b, c])) == [("C", 2, 7), ("B", 7, None)]


def test_refold_settles_a_new_equal_start_by_latest_recorded() -> None:
    # Deleting the bounded X lets A start at 0 again, where the later N also starts.
    a, x, n = put("A", 0), put("X", -1, 2), put("N", 0, fid="fn")
    assert shape(fold([a, x])) == [("X", -1, 2), ("A", 2, None)]
    assert shape(fold([a, n])) == [("N", 0, None)]


def test_diff_retires_changed_versions_and_inserts_new_ones() -> None:
    before = run(put("A", 0, fid="fa"))
    after, _ = apply_assertion(before, put("B", 5, fid="fb"))
    m = diff([("v1", before[0])], after)
    assert m.retire == ["v1"]
    assert shape(tuple(m.insert)) == [("A", 0, 5), ("B", 5, None)]
    assert diff([("v1", before[0])], before).empty


def test_invariant_checker_catches_overlap_and_two_open_rows() -> None:
    a = Interval("a", t(0), None, claim("A"), ("e",))
    b = Interval("b", t(1), None, claim("B"), ("e",))
    with pytest.raises(AssertionError, match="open"):
        check_invariants([a, b])
    with pytest.raises(AssertionError, match="overlaps"):
        check_invariants([Interval("a", t(0), t(3), claim("A"), ("e",)), b])
