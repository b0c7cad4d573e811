"""The temporal core: pure functions that decide what a timeline looks like.

A timeline is the list of non-overlapping, half-open valid-time intervals
``[valid_from, valid_to)`` of one key (tenant, subject, predicate[, object]). It is fully
determined by its *assertions* (writes and retractions) applied in the order they were
recorded, so:

- a write applies one assertion to the current intervals (:func:`apply_assertion`);
- deleting an episode folds the remaining assertions again (:func:`fold`), which repairs
  every interval the episode's facts had cut;
- :func:`diff` turns "intervals before" and "intervals after" into store mutations:
  versions to close in system time and versions to insert. Nothing is edited in place.

Rules (ARCHITECTURE.md, "Time"):
- an open fact starting inside an interval cuts it there and inherits its end;
- an open fact starting in a gap, or before every interval, ends where the next begins;
- a bounded fact replaces exactly its portion: what it overlaps is trimmed around it and
  resumes after its end (SQL:2011 ``FOR PORTION OF``);
- an equal ``valid_from`` with another statement is a conflict settled by the policy;
  the same statement over the same portion (open, or with the same end) again from the
  same episode is a no-op, from another episode it adds that episode as a source
  (corroboration); the same statement with another end is a bounded write like any other;
- a retraction ends a fact's validity without a replacement.

A corroboration is recorded under the id of the fact it corroborated
(:func:`ledger_entry`), so when the first source is deleted the fold recreates the fact
under the same id and the retractions recorded against that id still apply to it.
"""

from __future__ import annotations

import itertools
import uuid
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from graph.errors import FactConflictError, invalid
from graph.model import Cardinality, ConflictPolicy, Scalar, ValueType, WriteStatus, canonical_value
from graph.timeutil import format_instant

_DERIVED_NS = uuid.UUID("5b0f3c52-8a3e-4d7e-9c57-2f4f9b8e6a10")


@dataclass(frozen=True)
class Claim:
    """What a fact says, independent of when it holds."""

    subject: str
    subject_type: str
    predicate: str
    value: Scalar | None
    value_type: ValueType
    object: str | None
    object_type: str | None
    confidence: float
    memory_type: str
    schema_version: int
    retention_policy: str
    cardinality: Cardinality

    def same_statement(self, other: Claim) -> bool:
        return (
            canonical_value(self.value) == canonical_value(other.value)
            and self.object == other.object
        )


@dataclass(frozen=True)
class Interval:
    fact_id: str
    valid_from: datetime
    valid_to: datetime | None
    claim: Claim
    sources: tuple[str, ...]
    supersedes: tuple[str, ...] = ()

    def contains(self, t: datetime) -> bool:
        return self.valid_from <= t and (self.valid_to is None or t < self.valid_to)

    def overlaps(self, start: datetime, end: datetime | None) -> bool:
        starts_before_end = end is None or self.valid_from < end
        ends_after_start = self.valid_to is None or self.valid_to > start
        return starts_before_end and ends_after_start


@dataclass(frozen=True)
class Assertion:
    """One entry of a timeline's ledger, in recorded order (``seq``)."""

    seq: int
    kind: Literal["assert", "retract"]
    fact_id: str
    recorded_at: datetime
    valid_from: datetime | None = None  # assert
    valid_to: datetime | None = None  # assert: optional end; retract: the end it sets
    claim: Claim | None = None
    source_episode_id: str | None = None
    policy: ConflictPolicy = ConflictPolicy.REJECT


@dataclass(frozen=True)
class Outcome:
    status: WriteStatus
    fact_id: str


@dataclass
class Mutations:
    """What a store must do: close these versions in system time, insert these intervals."""

    retire: list[str] = field(default_factory=list)  # version ids
    insert: list[Interval] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.retire and not self.insert


def derived_id(fact_id: str, cutter_id: str) -> str:
    """Stable id of the piece of ``fact_id`` that resumes after ``cutter_id``'s portion.

    Deterministic so that folding the same assertions again yields the same ids, and a
    repaired timeline differs from the old one only where it really changed.
    """
    return "f_" + uuid.uuid5(_DERIVED_NS, f"{fact_id}/{cutter_id}").hex


def _sorted(intervals: Iterable[Interval]) -> tuple[Interval, ...]:
    return tuple(sorted(intervals, key=_start))


def _start(i: Interval) -> datetime:
    return i.valid_from


def _fact_id(i: Interval) -> str:
    return i.fact_id


# A timeline's intervals never overlap (every placement cuts what it lands on, and an
# interval is never empty), so sorted by valid_from they have distinct starts and each
# instant lies in at most one: the functions below find an interval by bisection and
# change the sorted tuple where it changes, where scanning and re-sorting it for every
# assertion made folding a timeline quadratic (1.4 s at 4,000 entries).


def apply_assertion(
    state: Sequence[Interval],
    a: Assertion,
    *,
    strict: bool = True,
    index: int | None = None,
    timeline: str = "",
    seen: set[str] | None = None,
) -> tuple[tuple[Interval, ...], Outcome]:
    """Apply one assertion to a timeline's intervals.

    ``strict`` is True for a new write (a ``reject`` conflict raises) and False when
    re-folding recorded assertions, where a ``reject`` conflict that deleting an episode
    brought about is settled in favour of the later recorded fact instead of failing.
    ``seen``: every fact id that has been in ``state``, when the caller keeps them
    (:func:`fold`, from an empty state); no other id can be in it, and the ids this
    assertion places are added.
    """
    if a.kind == "retract":
        return retract(state, fact_id=a.fact_id, at=a.valid_to, strict=strict), Outcome(
            WriteStatus.CREATED, a.fact_id
        )
    assert a.claim is not None
    assert a.valid_from is not None
    assert a.source_episode_id is not None
    start, end = a.valid_from, a.valid_to
    at = bisect_left(state, start, key=_start)
    same_start = state[at] if at < len(state) and state[at].valid_from == start else None
    restated = same_start is not None and same_start.claim.same_statement(a.claim)
    if same_start is not None and restated:
        # Open: placing it would give exactly this interval again. Bounded with another
        # end: it replaces that portion (below), it does not corroborate.
        if end is None or end == same_start.valid_to:
            if a.source_episode_id in same_start.sources:
                return tuple(state), Outcome(WriteStatus.UNCHANGED, same_start.fact_id)
            merged = replace(same_start, sources=(*same_start.sources, a.source_episode_id))
            out = list(state)
            out[at] = merged  # the same start: the same place
            return tuple(out), Outcome(WriteStatus.CORROBORATED, merged.fact_id)
    elif same_start is not None:
        policy = a.policy
        if not strict and policy == ConflictPolicy.REJECT:
            # Re-folding after a deletion: this fact was accepted when written, so a clash
            # that the deletion brought about goes to the later recorded fact. Other
            # policies are applied again exactly as recorded.
            policy = ConflictPolicy.LATEST_RECORDED_WINS
        if policy == ConflictPolicy.REJECT:
            raise FactConflictError(
                index=index,
                conflicting_fact_id=same_start.fact_id,
                conflicting_source_episode_id=same_start.sources[0] if same_start.sources else None,
                source_episode_id=a.source_episode_id,
                timeline=timeline,
                valid_from=format_instant(start),
            )
        if (
            policy == ConflictPolicy.HIGHEST_CONFIDENCE_WINS
            and a.claim.confidence <= same_start.claim.confidence
        ):
            # Ties keep what is recorded: a policy must never flip-flop on redelivery order.
            return tuple(state), Outcome(WriteStatus.KEPT_EXISTING, same_start.fact_id)

    new_sources = (a.source_episode_id,)
    if (seen is None or a.fact_id in seen) and a.fact_id in map(_fact_id, state):
        # Only in a re-fold: a corroboration recorded under the id of a fact that is still
        # there but no longer starts where it did (its first source's interval came back
        # whole). It becomes an interval of its own, under an id derived from its entry.
        a = replace(a, fact_id=derived_id(a.fact_id, f"#{a.seq}"))
    if seen is not None:
        seen.add(a.fact_id)
    if end is None:
        return _place_open(state, a, new_sources)
    return _place_bounded(state, a, new_sources, end, seen)


def _place_open(
    state: Sequence[Interval], a: Assertion, sources: tuple[str, ...]
) -> tuple[tuple[Interval, ...], Outcome]:
    assert a.claim is not None
    assert a.valid_from is not None
    start = a.valid_from
    out = list(state)
    at = bisect_right(state, start, key=_start)  # the first interval starting after us
    host = state[at - 1] if at > 0 and state[at - 1].contains(start) else None
    if host is not None:
        # Cut the host at our start; we inherit its end.
        if host.valid_from < start:
            out[at - 1] = replace(host, valid_to=start)
        else:
            del out[at - 1]
            at -= 1
        new = Interval(a.fact_id, start, host.valid_to, a.claim, sources, (host.fact_id,))
    else:
        # In a gap or before everything: end where the next interval begins.
        following = state[at].valid_from if at < len(state) else None
        new = Interval(a.fact_id, start, following, a.claim, sources)
    out.insert(at, new)
    return tuple(out), Outcome(WriteStatus.CREATED, a.fact_id)


def _place_bounded(
    state: Sequence[Interval],
    a: Assertion,
    sources: tuple[str, ...],
    end: datetime,
    seen: set[str] | None,
) -> tuple[tuple[Interval, ...], Outcome]:
    assert a.claim is not None
    assert a.valid_from is not None
    start = a.valid_from
    # Only the intervals from the one holding our start (if any) to the last starting
    # before our end can overlap us; the others stay where they are.
    lo = bisect_right(state, start, key=_start)
    if lo > 0 and state[lo - 1].overlaps(start, end):
        lo -= 1
    hi = max(lo, bisect_left(state, end, key=_start))
    out: list[Interval] = []
    cut: list[str] = []
    for i in state[lo:hi]:
        if not i.overlaps(start, end):
            out.append(i)
            continue
        cut.append(i.fact_id)
        left = i.valid_from < start
        if left:
            out.append(replace(i, valid_to=start))
        if i.valid_to is None or i.valid_to > end:
            # What we overlapped resumes after our portion.
            piece_id = derived_id(i.fact_id, a.fact_id) if left else i.fact_id
            out.append(replace(i, fact_id=piece_id, valid_from=end, supersedes=()))
            if seen is not None:
                seen.add(piece_id)
    out.append(Interval(a.fact_id, start, end, a.claim, sources, tuple(cut)))
    return (*state[:lo], *_sorted(out), *state[hi:]), Outcome(WriteStatus.CREATED, a.fact_id)


def ledger_entry(a: Assertion, outcome: Outcome) -> Assertion:
    """The ledger entry that records ``a`` given what applying it did.

    A corroboration is recorded under the fact it corroborated: were its first source
    deleted, folding the rest recreates that fact under the same id, so the retractions
    and the cuts that name it keep applying to it.
    """
    if outcome.status == WriteStatus.CORROBORATED:
        return replace(a, fact_id=outcome.fact_id)
    return a


def retract(
    state: Sequence[Interval], *, fact_id: str, at: datetime | None, strict: bool = True
) -> tuple[Interval, ...]:
    """End ``fact_id`` at ``at`` without a replacement."""
    pos = next((k for k, i in enumerate(state) if i.fact_id == fact_id), None)
    target = None if pos is None else state[pos]
    reason = None
    if target is None:
        reason = f"fact {fact_id} is not current on this timeline"
    elif at is None:
        reason = "valid_to is required"
    elif at <= target.valid_from:
        reason = f"valid_to must be after the fact's valid_from {target.valid_from.isoformat()}"
    elif target.valid_to is not None and at >= target.valid_to:
        reason = f"the fact already ends at {target.valid_to.isoformat()}"
    if reason is not None:
        if strict:
            raise invalid(reason, field="valid_to")
        return tuple(state)  # re-fold: its target is gone or no longer that long; skip
    assert target is not None
    assert pos is not None
    out = list(state)
    out[pos] = replace(target, valid_to=at)  # the same start: the same place
    return tuple(out)


def fold(assertions: Iterable[Assertion]) -> tuple[Interval, ...]:
    """The timeline that a sequence of recorded assertions produces."""
    state: tuple[Interval, ...] = ()
    seen: set[str] = set()
    for a in sorted(assertions, key=lambda x: x.seq):
        state, _ = apply_assertion(state, a, strict=False, seen=seen)
    return state


def diff(old: Sequence[tuple[str, Interval]], new: Sequence[Interval]) -> Mutations:
    """Versions to retire and intervals to insert to turn ``old`` (version ids) into ``new``."""
    if not old:  # a timeline with no current versions (a new subject): insert them all
        return Mutations(insert=list(new))
    m = Mutations()
    wanted = {i.fact_id: i for i in new}
    have = {i.fact_id: (vid, i) for vid, i in old}
    for fid, (vid, i) in have.items():
        if wanted.get(fid) != i:
            m.retire.append(vid)
    for fid, i in wanted.items():
        prior = have.get(fid)
        if prior is None or prior[1] != i:
            m.insert.append(i)
    return m


def check_invariants(state: Sequence[Interval]) -> None:
    """No two intervals overlap and at most one is open; raises AssertionError otherwise."""
    ordered = _sorted(state)
    open_count = sum(1 for i in ordered if i.valid_to is None)
    if open_count > 1:
        raise AssertionError(f"{open_count} open intervals")
    for a, b in itertools.pairwise(ordered):
        if a.valid_to is None or a.valid_to > b.valid_from:
            raise AssertionError(f"{a.fact_id} overlaps {b.fact_id}")
    for i in ordered:
        if i.valid_to is not None and i.valid_to <= i.valid_from:
            raise AssertionError(f"{i.fact_id} is empty")
