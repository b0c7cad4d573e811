"""A forget dry run reads one snapshot and writes nothing, so it takes no write lock.

On SQLite every tenant's writes wait for the file's one writer lock: a dry run that
planned in a write transaction (rolled back) held them all for as long as it took, and
waited itself for any writer. On Neo4j it locked the timelines and the entity as the real
forget does. Its answer must still be exactly what the real forget then does.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import Driver

from graph.erasure import ErasableStore, ForgetResult, forget
from graph.port import Store
from graph.service import MemoryService
from graph.stores.sqlite import connection
from graph.stores.sqlite.store import SqliteStore
from tests.conformance.test_tenant_isolation import delta, seed, t
from tests.conformance.test_tenant_isolation_erasure import episode, export, held, merge, review


def scenario(svc: MemoryService, store: Store, tenant: str) -> None:
    """mira in episodes e1 and e2 (seed), as the object of zoe's facts in e4 and e5 (the
    latter on a timeline of zoe's that goes on in e3), in a fact retracted since, and in
    review candidates; zoe's e3 and its candidates stay."""
    seed(svc, tenant, "a")
    episode(svc, tenant, "e3", t(1))
    episode(svc, tenant, "e4", t(1.5))
    svc.write_facts(
        tenant_id=tenant,
        deltas=[
            delta("zoe", "mood", "e3", t(1), value="calm"),
            delta("zoe", "knows", "e4", t(1.5), object="mira", object_type="Person"),
        ],
    )
    # zoe's advisor: mira (e5, which goes), then ivan (e3, which stays): a shared timeline.
    episode(svc, tenant, "e5", t(0.5))
    for who, ep, at in (("mira", "e5", t(0.5)), ("ivan", "e3", t(2))):
        svc.write_facts(
            tenant_id=tenant,
            deltas=[delta("zoe", "advisor", ep, at, object=who, object_type="Person")],
        )
    (hobby,) = svc.write_facts(
        tenant_id=tenant, deltas=[delta("mira", "hobby", "e1", t(0), value="chess")]
    ).facts
    svc.retract(tenant_id=tenant, fact_id=hobby.fact_id, valid_to=t(1))
    q = store.queue
    q.hold_candidate(candidate=held(tenant, "c1", "e3", "zoe"))
    q.hold_candidate(candidate=held(tenant, "c2", "e1", "mira"))
    q.hold_candidate(candidate=held(tenant, "c3", "e3", "mira"))
    q.add_merge_candidates(
        candidates=[merge(tenant, "m1", "e3", "zoe"), merge(tenant, "m2", "e1", "mira")]
    )


def the_forget_then(store: ErasableStore, tenant: str, preview: ForgetResult) -> None:
    """The dry run changed nothing and answered what the real forget reports."""
    done = forget(store, tenant_id=tenant, entity_id="mira", dry_run=False)
    assert preview.dry_run
    assert not done.dry_run
    assert preview.model_dump(exclude={"dry_run"}) == done.model_dump(exclude={"dry_run"})
    assert (done.entities, done.episodes, done.candidates) == (1, 4, 3)
    assert done.versions >= done.facts > 0
    assert done.assertions > 0


# -- SQLite: no writer lock ---------------------------------------------------------------


@pytest.fixture
def short_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SqliteStore]:
    """A file store whose writers give up after 0.5 s (not 30 s) on a busy lock."""
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_S", 0.5)
    s = SqliteStore(tmp_path / "sgam.db")
    s.init()
    yield s
    s.close()


def test_a_sqlite_forget_dry_run_plans_while_another_connection_holds_the_writer_lock(
    short_store: SqliteStore, tenant: str
) -> None:
    """Another connection holds the writer lock (BEGIN IMMEDIATE, with a write of its
    own pending) for the whole dry run: it answers anyway, from the committed state."""
    svc = MemoryService(short_store)
    scenario(svc, short_store, tenant)
    before = (export(short_store, tenant), review(short_store, tenant))
    writer = sqlite3.connect(short_store.path, isolation_level=None, timeout=0.5)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute(
            "DELETE FROM episode_mentions WHERE tenant_id = ? AND entity_id = 'mira'", (tenant,)
        )
        preview = forget(short_store, tenant_id=tenant, entity_id="mira", dry_run=True)
        writer.execute("ROLLBACK")
    finally:
        writer.close()
    assert (export(short_store, tenant), review(short_store, tenant)) == before
    the_forget_then(short_store, tenant, preview)


# -- both stores: the same answer ---------------------------------------------------------


def test_a_forget_dry_run_answers_what_the_forget_then_does(
    store: Store, service: MemoryService, tenant: str
) -> None:
    assert isinstance(store, ErasableStore)
    scenario(service, store, tenant)
    before = (export(store, tenant), review(store, tenant))
    preview = forget(store, tenant_id=tenant, entity_id="mira", dry_run=True)
    assert (export(store, tenant), review(store, tenant)) == before
    the_forget_then(store, tenant, preview)


# -- Neo4j: a read transaction, no locks --------------------------------------------------


@pytest.mark.neo4j
def test_a_neo4j_forget_dry_run_waits_for_no_lock(
    neo4j_store: Store, nsvc: MemoryService, ntenant: str, driver: Driver, database: str
) -> None:
    """Another transaction holds the write lock of mira's node: the dry run (a read
    transaction) answers meanwhile; one that locked like the real forget would wait."""
    assert isinstance(neo4j_store, ErasableStore)
    scenario(nsvc, neo4j_store, ntenant)
    answers: list[ForgetResult | BaseException] = []

    def dry() -> None:
        try:
            answers.append(forget(neo4j_store, tenant_id=ntenant, entity_id="mira", dry_run=True))
        except BaseException as e:  # the test's thread reports it
            answers.append(e)

    with driver.session(database=database) as session:
        holder = session.begin_transaction()
        try:
            holder.run(
                "MATCH (e:Entity {tenant_id: $t, entity_id: 'mira'}) SET e.probe = 1", t=ntenant
            ).consume()
            worker = threading.Thread(target=dry)
            worker.start()
            worker.join(15)
            finished = not worker.is_alive()
        finally:
            holder.rollback()
        worker.join(60)
    assert finished, "the dry run waited for another transaction's lock"
    (preview,) = answers
    assert isinstance(preview, ForgetResult), preview
    the_forget_then(neo4j_store, ntenant, preview)
