"""Review L5 / item 4: system time only moves forward, on both stores.

Writers in other processes have other wall clocks. One whose clock runs ahead records an
instant the others have not reached; before the store kept the clock, a writer with a
slower clock then recorded *earlier* instants on other timelines, so a read at a
``known_at`` the store had already passed changed afterwards.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graph import ledger
from graph.model import EpisodeCreate, MemoryDelta
from graph.port import Store
from graph.service import MemoryService
from graph.timeutil import Clock, utcnow

T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)


class _SkewedClock(Clock):
    """The wall clock of another process, ``offset`` away from ours."""

    def __init__(self, offset: timedelta) -> None:
        super().__init__()
        self.offset = offset

    def now(self, *, after: datetime | None = None) -> datetime:
        t = datetime.now(UTC) + self.offset
        return t if after is None or t > after else after + timedelta(microseconds=1)


def _write(service: MemoryService, tenant: str, subject: str, value: str) -> datetime:
    (f,) = service.write_facts(
        tenant_id=tenant,
        deltas=[
            MemoryDelta(
                subject=subject,
                predicate="city",
                value=value,
                valid_from=T0,
                source_episode_id="e1",
            )
        ],
    ).facts
    return f.recorded_at


def _at(service: MemoryService, tenant: str, known_at: datetime) -> list[tuple[str, object]]:
    facts = service.facts(tenant_id=tenant, as_of=T0, known_at=known_at)
    return sorted((f.subject, f.value) for f in facts)


def test_a_read_at_a_passed_known_at_never_changes(
    store: Store, service: MemoryService, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id="e1", content="x", occurred_at=T0)
    )
    # A process whose clock runs an hour ahead writes first.
    monkeypatch.setattr(ledger, "CLOCK", _SkewedClock(timedelta(hours=1)))
    ahead = _write(service, tenant, "ann", "Lyon")
    assert ahead > utcnow() + timedelta(minutes=59)
    # The store has recorded that instant: a read half an hour before it is settled.
    k = utcnow() + timedelta(minutes=30)
    before = _at(service, tenant, k)
    assert before == []
    # Now processes with our own, slower clock write other timelines and retract.
    monkeypatch.setattr(ledger, "CLOCK", _SkewedClock(timedelta(0)))
    later = [_write(service, tenant, f"p{i}", "Nice") for i in range(3)]
    assert later[0] > ahead  # after everything the store recorded, not the wall clock
    assert later == sorted(later)
    assert len(set(later)) == 3
    [ann] = service.facts(tenant_id=tenant, subject="ann", as_of=T0, known_at=later[-1])
    ended = service.retract(tenant_id=tenant, fact_id=ann.fact_id)
    assert ended.recorded_at > later[-1]
    assert _at(service, tenant, k) == before  # the answer at k is what it was
    # Every write is visible once its own instant is reached.
    assert _at(service, tenant, later[-1]) == [
        ("ann", "Lyon"),
        ("p0", "Nice"),
        ("p1", "Nice"),
        ("p2", "Nice"),
    ]


def test_each_tenant_has_its_own_clock(
    store: Store, service: MemoryService, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tenant whose writer ran ahead does not push another tenant's system time."""
    other = tenant + "-b"
    for t in (tenant, other):
        service.add_episode(
            tenant_id=t, body=EpisodeCreate(episode_id="e1", content="x", occurred_at=T0)
        )
    try:
        monkeypatch.setattr(ledger, "CLOCK", _SkewedClock(timedelta(hours=1)))
        _write(service, tenant, "ann", "Lyon")
        monkeypatch.setattr(ledger, "CLOCK", _SkewedClock(timedelta(0)))
        assert _write(service, other, "bob", "Pau") < utcnow() + timedelta(minutes=1)
    finally:
        store.purge_tenant(tenant_id=other)
