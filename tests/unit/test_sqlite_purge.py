"""Erasing a tenant from a SQLite file: bounded transactions, sized by their own time.

Real SQLite files. Every tenant's writes wait for the file's one writer lock, so the
erasure must hold it in short transactions, and the size of the next one must follow how
long the last one held the lock, not how long it queued for it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from sqlite3 import Connection

import pytest

from graph.model import EpisodeCreate, MemoryDelta
from graph.service import MemoryService
from graph.stores.sqlite import store as store_module
from graph.stores.sqlite.store import TENANT_TABLES, SqliteStore

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def seed(store: SqliteStore, tenant: str, people: int) -> int:
    """``people`` subjects with three versions of one attribute each; the tenant's rows."""
    service = MemoryService(store)
    for step in range(3):
        eid = f"e{step}"
        body = EpisodeCreate(episode_id=eid, content=f"step {step}", occurred_at=T0)
        service.add_episode(tenant_id=tenant, body=body)
        service.write_facts(
            tenant_id=tenant,
            deltas=[
                MemoryDelta(
                    subject=f"p{i}",
                    predicate="city",
                    value=f"city {step}",
                    valid_from=T0 + timedelta(days=step),
                    source_episode_id=eid,
                )
                for i in range(people)
            ],
        )
    return rows_of(store, tenant)


def rows_of(store: SqliteStore, tenant: str) -> int:
    return sum(
        store.conn.read(f"SELECT count(*) FROM {t} WHERE tenant_id = ?", (tenant,))[0][0]
        for t in TENANT_TABLES
    )


class CountedWrites:
    """Counts the store's write transactions and the rows that each one's last statement
    changed itself (SQLite's changes(): rows deleted by triggers not included)."""

    def __init__(self, store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.changes: list[int] = []
        inner = store.conn.write

        @contextmanager
        def write() -> Iterator[Connection]:
            with inner() as c:
                yield c
                self.changes.append(c.execute("SELECT changes()").fetchone()[0])

        monkeypatch.setattr(store.conn, "write", write)


def test_no_transaction_deletes_more_than_a_batch(
    sqlite_store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "PURGE_BATCH", 7)
    seed(sqlite_store, "big", people=40)
    kept = seed(sqlite_store, "other", people=5)
    writes = CountedWrites(sqlite_store, monkeypatch)
    sqlite_store.purge_tenant(tenant_id="big")
    assert rows_of(sqlite_store, "big") == 0
    assert rows_of(sqlite_store, "other") == kept
    assert max(writes.changes) == 7  # full batches, never more
    assert len(writes.changes) >= sum(writes.changes) // 7
    assert sum(writes.changes) > 200  # versions, ledger entries, entities, mentions, ...


def test_a_batch_is_sized_by_the_time_it_held_the_lock_not_the_time_it_queued(
    sqlite_store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another thread writes all along, each of its transactions holding the lock for
    four times the purge's target. Counting the wait for the lock as the batch's own time
    shrank the batches to one row (hundreds of transactions here); measured from BEGIN
    they grow as they should, to a few transactions per table."""
    monkeypatch.setattr(store_module, "PURGE_FIRST_BATCH", 4)
    monkeypatch.setattr(store_module, "PURGE_BATCH_SECONDS", 0.005)
    rows = seed(sqlite_store, "big", people=100)
    stop = threading.Event()

    def busy_neighbour() -> None:
        while not stop.is_set():
            with sqlite_store.conn.write():
                time.sleep(0.02)

    writes = CountedWrites(sqlite_store, monkeypatch)
    neighbour = threading.Thread(target=busy_neighbour)
    neighbour.start()
    try:
        sqlite_store.purge_tenant(tenant_id="big")
    finally:
        stop.set()
        neighbour.join()
    assert rows_of(sqlite_store, "big") == 0
    purge_writes = len(writes.changes) - writes.changes.count(0)  # the neighbour's change nothing
    assert purge_writes < rows // 10, (purge_writes, rows)
