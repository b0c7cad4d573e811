"""The claim's round across tenants, branch by branch (queue_claim.cypher reads each from
an index): the oldest due episode of a tenant, tenants with nothing due passed over, the
wrap round to the first tenant, and one tenant's claim wherever the round stands."""

from __future__ import annotations

from datetime import timedelta

from graph.model import EpisodeCreate, EpisodeStatus
from graph.port import Store
from graph.service import MemoryService
from graph.timeutil import utcnow
from tests.integration.test_extraction_pipeline import T0


def _due(service: MemoryService, tenant: str, eid: str, minutes: float) -> None:
    """A pending episode due ``minutes`` from now (negative: overdue that long)."""
    service.add_episode(
        tenant_id=tenant,
        body=EpisodeCreate(episode_id=eid, content=f"text of {eid}", occurred_at=T0),
        status=EpisodeStatus.PENDING,
    )
    got = service.store.queue.enqueue(
        tenant_id=tenant,
        episode_id=eid,
        at=utcnow() + timedelta(minutes=minutes),
        from_statuses={"pending"},
        reset_attempts=False,
    )
    assert got is not None


def _claim(store: Store, *, after: str | None = None, tenant: str | None = None) -> str | None:
    if after is not None:
        setattr(store.queue, "last_tenant", after)  # noqa: B010 (the round's place)
    now = utcnow()
    ep = store.queue.claim(
        owner="w",
        now=now,
        lease_until=now + timedelta(seconds=60),
        max_attempts=3,
        tenant_id=tenant,
    )
    return None if ep is None else f"{ep.tenant_id}/{ep.episode_id}"


def test_the_round_takes_oldest_first_passes_over_what_is_not_due_and_wraps(
    store: Store, service: MemoryService, tenant: str
) -> None:
    # Tenant ids chosen for their place in tenant order on a shared store: a, b and c sort
    # next to each other (other tests' tenants never fall between them); "0..." sorts
    # before and "z..." after every other test's tenant, so the round wraps from z to 0.
    a, b, c = f"{tenant}-a", f"{tenant}-b", f"{tenant}-c"
    first, last = f"0{tenant}", f"z{tenant}"
    try:
        _due(service, a, "a-newer", -1)
        _due(service, a, "a-older", -2)  # queued second, due first
        _due(service, b, "b-later", 60)  # b has nothing due
        _due(service, c, "c0", -1)
        _due(service, last, "z0", -1)
        _due(service, first, "f0", -1)

        assert _claim(store, after=tenant) == f"{a}/a-older"
        assert _claim(store) == f"{c}/c0"  # b's episode is not due yet
        assert _claim(store, after=tenant) == f"{a}/a-newer"
        # Nothing due after z: round again from the first tenant (not z's own z0).
        assert _claim(store, after=last) == f"{first}/f0"
        # One tenant's claim, with the round standing elsewhere (here: after it).
        assert _claim(store, after=first, tenant=b) is None
        assert _claim(store, tenant=last) == f"{last}/z0"
        assert store.queue.queue_counts(tenant_id=b) == {"pending": 1}
    finally:
        for t in (a, b, c, first, last):
            store.purge_tenant(tenant_id=t)
