"""A ledger copy of a tenant keeps its extraction queue workable (real SQLite files).

An episode a worker of the old store was extracting comes back pending (its lease was
that worker's), and which workers may claim an episode (one needing a model or not)
travels with it.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from api.transfer.exporter import ExportKind, export, restore
from graph.errors import ValidationError
from graph.model import EpisodeCreate, EpisodeStatus, MemoryDelta
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def queued(store: SqliteStore, tenant: str, eid: str) -> None:
    body = EpisodeCreate(episode_id=eid, content=f"{eid}: Mira moved to Oslo", occurred_at=T0)
    MemoryService(store).capture(
        tenant_id=tenant, body=body, status=EpisodeStatus.PENDING, needs_model=True
    )


def claim(store: SqliteStore, tenant: str, *, with_model: bool) -> str | None:
    now = datetime.now(UTC)
    e = store.queue.claim(
        owner="w",
        now=now,
        lease_until=now + timedelta(minutes=5),
        max_attempts=3,
        tenant_id=tenant,
        with_model=with_model,
    )
    return None if e is None else e.episode_id


def test_a_restored_queue_is_claimable_by_the_right_workers(tmp_path: Path) -> None:
    old = SqliteStore(tmp_path / "old.db")
    old.init()
    new = SqliteStore(tmp_path / "new.db")
    new.init()
    try:
        queued(old, "t", "e1")
        queued(old, "t", "e2")
        assert claim(old, "t", with_model=True) == "e1"  # being extracted at export time
        ledger = io.StringIO()
        export(old, ledger, tenant_id="t", kind=ExportKind.LEDGER)
        restore(new, io.BytesIO(ledger.getvalue().encode()), tenant_id="t")

        e1 = new.get_episode(tenant_id="t", episode_id="e1")
        assert e1 is not None
        assert e1.status == EpisodeStatus.PENDING
        assert e1.needs_model is True
        # A worker without a model takes neither; one with a model takes both in turn.
        assert claim(new, "t", with_model=False) is None
        assert {claim(new, "t", with_model=True), claim(new, "t", with_model=True)} == {"e1", "e2"}
    finally:
        old.close()
        new.close()


def test_a_ledger_cut_at_a_record_boundary_is_refused(tmp_path: Path) -> None:
    """An export that stopped (a failed read, a broken pipe) leaves whole lines: without
    the end record, written only once every page was, a restore cannot tell it from a
    whole ledger. It is refused, as is a file whose end record counts other records."""
    old = SqliteStore(tmp_path / "old.db")
    old.init()
    try:
        queued(old, "t", "e1")
        queued(old, "t", "e2")
        ledger = io.StringIO()
        n = export(old, ledger, tenant_id="t", kind=ExportKind.LEDGER)
    finally:
        old.close()
    lines = ledger.getvalue().splitlines(keepends=True)
    assert len(lines) == n + 1
    assert lines[-1] == f'{{"type":"end","records":{n}}}\n'
    for name, text, message in (
        ("cut", "".join(lines[:-2]), f"no end record after {n - 1} records"),
        ("miscounted", "".join(lines[:-2] + lines[-1:]), f"counts {n} records, the file holds"),
        ("after", "".join(lines + lines[:1]), "a record after the ledger's end record"),
    ):
        new = SqliteStore(tmp_path / f"{name}.db")
        new.init()
        try:
            with pytest.raises(ValidationError, match=message):
                restore(new, io.BytesIO(text.encode()), tenant_id="t")
        finally:
            new.close()


def test_an_assertion_of_an_unknown_kind_is_refused_not_read_as_an_assertion(
    tmp_path: Path,
) -> None:
    old = SqliteStore(tmp_path / "old.db")
    old.init()
    try:
        MemoryService(old).capture(
            tenant_id="t",
            body=EpisodeCreate(
                episode_id="e1",
                content="Mira moved to Oslo",
                occurred_at=T0,
                facts=[MemoryDelta(subject="mira", predicate="city", value="Oslo")],
            ),
        )
        ledger = io.StringIO()
        export(old, ledger, tenant_id="t", kind=ExportKind.LEDGER)
    finally:
        old.close()
    edited = ledger.getvalue().replace('"kind":"assert"', '"kind":"delete"')
    assert '"kind":"delete"' in edited
    new = SqliteStore(tmp_path / "new.db")
    new.init()
    try:
        with pytest.raises(ValidationError, match="assertion kind 'delete'"):
            restore(new, io.BytesIO(edited.encode()), tenant_id="t")
    finally:
        new.close()
