"""Review M8 and W1: the queue claims fairly across tenants, and only what a worker can do."""

from __future__ import annotations

from datetime import timedelta

import pytest

from extraction.settings import ExtractionSettings
from extraction.worker import Worker, WorkerPool
from graph.model import EpisodeCreate, EpisodeStatus
from graph.port import Store
from graph.service import MemoryService
from graph.timeutil import utcnow
from tests.integration.test_extraction_pipeline import T0


def _queue(
    service: MemoryService, tenant: str, eid: str, *, needs_model: bool | None = None
) -> None:
    _, created, _ = service.capture(
        tenant_id=tenant,
        body=EpisodeCreate(episode_id=eid, content=f"text of {eid}", occurred_at=T0),
        status=EpisodeStatus.PENDING,
        needs_model=needs_model,
    )
    assert created


def _due(service: MemoryService, tenant: str, eid: str, minutes: float) -> None:
    """A pending episode due ``minutes`` from now (negative: overdue that long)."""
    _queue(service, tenant, eid)
    got = service.store.queue.enqueue(
        tenant_id=tenant,
        episode_id=eid,
        at=utcnow() + timedelta(minutes=minutes),
        from_statuses={"pending"},
        reset_attempts=False,
    )
    assert got is not None


def _claim(
    store: Store,
    tenant: str | None,
    *,
    with_model: bool = True,
    after: str | None = None,
) -> tuple[str, str] | None:
    if after is not None:
        setattr(store.queue, "last_tenant", after)  # noqa: B010 (the round's place)
    now = utcnow()
    ep = store.queue.claim(
        owner="w",
        now=now,
        lease_until=now + timedelta(seconds=60),
        max_attempts=3,
        tenant_id=tenant,
        with_model=with_model,
    )
    return None if ep is None else (ep.tenant_id, ep.episode_id)


def test_one_tenants_backlog_does_not_hold_up_another(
    store: Store, service: MemoryService, tenant: str
) -> None:
    a, b = f"{tenant}-a", f"{tenant}-b"
    try:
        for i in range(3):  # a's backlog, queued first
            _queue(service, a, f"a{i}")
        _queue(service, b, "b0")
        # Claims across every tenant, starting the round just before these two tenants
        # (the shared Neo4j holds other tests' tenants: they must not be touched).
        setattr(store.queue, "last_tenant", tenant)  # noqa: B010 (the round's place)
        assert _claim(store, None) == (a, "a0")
        assert _claim(store, None) == (b, "b0")  # b's turn, though a has older work
    finally:
        for t in (a, b):
            store.purge_tenant(tenant_id=t)


def test_a_worker_without_a_model_leaves_what_needs_one(
    store: Store, service: MemoryService, tenant: str
) -> None:
    _queue(service, tenant, "chat", needs_model=True)  # a message: only a model extracts it
    _queue(service, tenant, "event", needs_model=False)  # an event mapping extracts it
    assert _claim(store, tenant, with_model=False) == (tenant, "event")
    assert _claim(store, tenant, with_model=False) is None  # "chat" stays pending
    assert service.get_episode(tenant_id=tenant, episode_id="chat").status == "pending"
    assert _claim(store, tenant, with_model=True) == (tenant, "chat")


def test_an_expired_lease_needing_a_model_is_not_taken_by_a_worker_without(
    store: Store, service: MemoryService, tenant: str
) -> None:
    _queue(service, tenant, "chat", needs_model=True)
    now = utcnow()
    got = store.queue.claim(
        owner="gone", now=now, lease_until=now, max_attempts=3, tenant_id=tenant
    )
    assert got is not None
    assert _claim(store, tenant, with_model=False) is None
    assert _claim(store, tenant, with_model=True) == (tenant, "chat")


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_workers_say_at_start_what_they_serve(
    service: MemoryService, capsys: pytest.CaptureFixture[str]
) -> None:
    pool = WorkerPool(service, None, ExtractionSettings(), count=2, tenant_id="acme")
    assert isinstance(pool.workers[0], Worker)
    pool.start()
    pool.stop(timeout=5)
    err = capsys.readouterr().err
    assert "2 extraction worker(s) for tenant acme" in err
    assert "episodes that need a model are left to workers that have one" in err


def test_a_retried_episode_is_marked_for_the_workers_that_can_do_it(
    store: Store, service: MemoryService, tenant: str
) -> None:
    """An episode stored without extraction (needs_model unknown), retried by hand, is
    not claimed by a worker without a model: no event mapping matches a plain message."""
    from extraction import retry_episode

    service.capture(
        tenant_id=tenant,
        body=EpisodeCreate(episode_id="m1", content="hello", occurred_at=T0),
    )
    retry_episode(service, tenant_id=tenant, episode_id="m1")
    assert _claim(store, tenant, with_model=False) is None
    assert _claim(store, tenant, with_model=True) == (tenant, "m1")


def test_the_round_takes_oldest_first_passes_over_what_is_not_due_and_wraps(
    store: Store, service: MemoryService, tenant: str
) -> None:
    """The claim's round branch by branch (queue_claim.cypher reads each from an index):
    a tenant's oldest due episode, tenants with nothing due passed over, the wrap round to
    the first tenant, and one tenant's claim wherever the round stands."""
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

        assert _claim(store, None, after=tenant) == (a, "a-older")
        assert _claim(store, None) == (c, "c0")  # b's episode is not due yet
        assert _claim(store, None, after=tenant) == (a, "a-newer")
        # Nothing due after z: round again from the first tenant (not z's own z0).
        assert _claim(store, None, after=last) == (first, "f0")
        # One tenant's claim, with the round standing elsewhere (here: after it).
        assert _claim(store, b, after=first) is None
        assert _claim(store, last) == (last, "z0")
        assert store.queue.queue_counts(tenant_id=b) == {"pending": 1}
    finally:
        for t in (a, b, c, first, last):
            store.purge_tenant(tenant_id=t)
