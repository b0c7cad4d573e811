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


def _claim(store: Store, tenant: str | None, *, with_model: bool = True) -> tuple[str, str] | None:
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
