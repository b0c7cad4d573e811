"""A real forget deletes the entity's episodes in batches, each its own transaction, so
on SQLite other tenants' writes get the one writer lock between batches instead of
waiting for the whole forget; an interrupted forget leaves a consistent store and
finishes when run again.

Batches are made tiny here (``TIMELINES_PER_TX``) so that a small scenario spans several.
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any

import pytest

from graph import erasure
from graph.erasure import ErasableStore, forget
from graph.errors import NotFoundError
from graph.port import Store
from graph.service import MemoryService
from tests.conformance.test_tenant_isolation import delta, t
from tests.conformance.test_tenant_isolation_erasure import episode, export, held, review
from tests.integration import test_forget_dry_run_lock


def scenario(service: MemoryService, store: Store, tenant: str) -> None:
    """The dry-run scenario (mira in four episodes) and a candidate about zoe from one
    of mira's episodes: it goes with that episode's batch, not for naming mira."""
    test_forget_dry_run_lock.scenario(service, store, tenant)
    store.queue.hold_candidate(candidate=held(tenant, "c4", "e4", "zoe"))


class Interrupted(Exception):
    pass


def state(store: Store, tenant: str) -> Any:
    """What the tenant holds now (current versions, the ledger, episodes, entities,
    candidates), without what each tenant or run makes anew (fact and version ids,
    recorded times)."""
    rows = export(store, tenant)
    current = sorted(
        (
            r["subject"],
            r["predicate"],
            str(r.get("value")),
            r.get("object"),
            r["valid_from"],
            r.get("valid_to"),
            tuple(r.get("sources") or ()),
        )
        for r in rows
        if r["type"] == "version" and r.get("retired_at") is None
    )
    ledger = sorted(
        (
            r["timeline_key"],
            r["kind"],
            r.get("valid_from"),
            r.get("valid_to"),
            str(r.get("claim")),
            r.get("source_episode_id"),
        )
        for r in rows
        if r["type"] == "assertion"
    )
    others = sorted(
        (r["type"], r.get("episode_id"), r.get("entity_id"))
        for r in rows
        if r["type"] in ("episode", "entity")
    )
    return current, ledger, others, review(store, tenant)


def test_a_forget_in_batches_releases_the_writer_lock_between_them(
    store: Store, service: MemoryService, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between two batches another tenant's write goes through (on SQLite it would wait
    for the writer lock if the forget held it), and the batched forget answers exactly
    what its dry run announced."""
    assert isinstance(store, ErasableStore)
    scenario(service, store, tenant)
    preview = forget(store, tenant_id=tenant, entity_id="mira", dry_run=True)
    monkeypatch.setattr(erasure, "TIMELINES_PER_TX", 1)
    other = f"{tenant}-other"
    wrote: list[datetime] = []
    errors: list[BaseException] = []

    def write_elsewhere() -> None:
        try:
            at = t(10 + len(wrote))
            (f,) = service.write_facts(
                tenant_id=other, deltas=[delta("ben", "status", "e9", at, value="busy")]
            ).facts
            wrote.append(f.valid_from)
        except BaseException as e:  # reported by the test's thread
            errors.append(e)

    def between() -> None:
        # A thread of its own: the forget's thread holds nothing now, or it would wait.
        worker = threading.Thread(target=write_elsewhere)
        worker.start()
        worker.join(60)
        assert not worker.is_alive(), "another tenant's write waited for the forget"

    episode(service, other, "e9", t(0))
    done = forget(store, tenant_id=tenant, entity_id="mira", dry_run=False, between=between)
    assert errors == []
    # one batch per episode; a write after the plan and after each batch
    assert len(wrote) == preview.episodes + 1 == 5
    assert done.model_dump(exclude={"dry_run"}) == preview.model_dump(exclude={"dry_run"})
    with pytest.raises(NotFoundError):
        forget(store, tenant_id=tenant, entity_id="mira", dry_run=True)
    store.purge_tenant(tenant_id=other)


def test_an_interrupted_forget_leaves_a_consistent_store_and_finishes_when_run_again(
    store: Store, service: MemoryService, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same history in two tenants: one forgets mira in one go, the other is cut off
    after its third batch and run again. Both end the same."""
    assert isinstance(store, ErasableStore)
    twin = f"{tenant}-twin"
    scenario(service, store, tenant)
    scenario(service, store, twin)
    try:
        forget(store, tenant_id=twin, entity_id="mira", dry_run=False)
        monkeypatch.setattr(erasure, "TIMELINES_PER_TX", 1)
        batches: list[int] = []

        def cut_off() -> None:
            batches.append(1)
            if len(batches) == 4:  # after the plan, then e1, e2 and e4 went
                raise Interrupted

        with pytest.raises(Interrupted):
            forget(store, tenant_id=tenant, entity_id="mira", dry_run=False, between=cut_off)
        # Three of mira's four episodes went, whole, and c4 with e4; she and e5 are
        # still there.
        halfway = forget(store, tenant_id=tenant, entity_id="mira", dry_run=True)
        assert halfway.episodes == 1
        assert "c4" not in str(review(store, tenant))
        assert halfway.entities == 1
        again = forget(store, tenant_id=tenant, entity_id="mira", dry_run=False)
        assert again.model_dump() == halfway.model_dump() | {"dry_run": False}
        assert state(store, tenant) == state(store, twin)
        assert state(store, tenant)[0], "the forget left nothing to compare"
    finally:
        store.purge_tenant(tenant_id=twin)


def test_a_forget_leaves_an_episode_posted_under_a_planned_id_since(
    store: Store, service: MemoryService, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the plan and its batch, e4 (zoe knows mira) is deleted and another e4,
    only about zoe, is posted: the forget deletes mira's e4, not the new one."""
    assert isinstance(store, ErasableStore)
    scenario(service, store, tenant)
    monkeypatch.setattr(erasure, "TIMELINES_PER_TX", 1)
    calls: list[int] = []

    def swap_e4() -> None:
        calls.append(1)
        if len(calls) == 1:
            service.delete_episode(tenant_id=tenant, episode_id="e4")
            episode(service, tenant, "e4", t(3))
            service.write_facts(
                tenant_id=tenant, deltas=[delta("zoe", "city", "e4", t(3), value="lyon")]
            )

    done = forget(store, tenant_id=tenant, entity_id="mira", dry_run=False, between=swap_e4)
    assert done.episodes == 3  # e1, e2, e5; mira's e4 was gone already
    assert [
        f.value for f in service.history(tenant_id=tenant, subject="zoe", predicate="city")
    ] == ["lyon"]
    assert service.get_episode(tenant_id=tenant, episode_id="e4").occurred_at == t(3)


def test_a_retraction_left_by_an_interrupted_forget_goes_when_it_is_run_again(
    store: Store, service: MemoryService, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mira's hobby, from e1, was retracted (a ledger entry of no episode); her city is
    from e2. Cut off after e1's batch, the forget has already dropped the retraction with
    e1: the versions that named the timeline went with e1, so a later run could not find
    it. Run again, it ends as an uninterrupted forget does: no ledger entry left."""
    assert isinstance(store, ErasableStore)
    twin = f"{tenant}-twin"

    def history(x: str) -> None:
        for i, ep in enumerate(("e1", "e2")):
            episode(service, x, ep, t(i))
        (hobby,) = service.write_facts(
            tenant_id=x, deltas=[delta("mira", "hobby", "e1", t(0), value="chess")]
        ).facts
        service.retract(tenant_id=x, fact_id=hobby.fact_id, valid_to=t(1))
        service.write_facts(tenant_id=x, deltas=[delta("mira", "city", "e2", t(0), value="oslo")])

    history(tenant)
    history(twin)
    try:
        forget(store, tenant_id=twin, entity_id="mira", dry_run=False)
        monkeypatch.setattr(erasure, "TIMELINES_PER_TX", 1)
        calls: list[int] = []

        def cut_off() -> None:
            calls.append(1)
            if len(calls) == 2:  # after the plan, then e1's batch
                raise Interrupted

        with pytest.raises(Interrupted):
            forget(store, tenant_id=tenant, entity_id="mira", dry_run=False, between=cut_off)
        forget(store, tenant_id=tenant, entity_id="mira", dry_run=False)
        assert state(store, tenant)[1] == state(store, twin)[1] == []
        assert state(store, tenant) == state(store, twin)
    finally:
        store.purge_tenant(tenant_id=twin)
