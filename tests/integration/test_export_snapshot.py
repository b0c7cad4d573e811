"""A ledger exported from SQLite while another connection writes is one state of the
tenant (real SQLite file, a real second writer thread)."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from api.transfer.exporter import ExportKind, export
from graph.model import EpisodeCreate, MemoryDelta
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore
from graph.stores.transfer import Record, RecordType

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def write(store: SqliteStore, eid: str, people: range) -> None:
    service = MemoryService(store)
    body = EpisodeCreate(episode_id=eid, content=f"{eid} notes", occurred_at=T0)
    service.add_episode(tenant_id="t", body=body)
    deltas = [
        MemoryDelta(subject=f"p{i}", predicate="city", value="Oslo", source_episode_id=eid)
        for i in people
    ]
    service.write_facts(tenant_id="t", deltas=deltas)


def test_a_ledger_exported_during_writes_is_one_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqliteStore(tmp_path / "s.db")
    store.init()
    try:
        write(store, "e1", range(5))
        inner = store.export_records

        def export_records(*, tenant_id: str, kind: RecordType) -> Iterator[Record]:
            if kind == "episode":  # entities read: another connection writes now
                t = threading.Thread(target=write, args=(store, "e2", range(5, 10)))
                t.start()
                t.join()
            return inner(tenant_id=tenant_id, kind=kind)

        monkeypatch.setattr(store, "export_records", export_records)
        out = io.StringIO()
        export(store, out, tenant_id="t", kind=ExportKind.LEDGER)
        records = [json.loads(line) for line in out.getvalue().splitlines()]
        by_type: dict[str, list[Record]] = {}
        for r in records:
            by_type.setdefault(r["type"], []).append(r)
        # The state before the second write, whole: its entities, episode, versions and
        # ledger entries all absent, and nothing that refers to what is absent.
        assert {e["entity_id"] for e in by_type["entity"]} == {f"p{i}" for i in range(5)}
        assert [e["episode_id"] for e in by_type["episode"]] == ["e1"]
        assert {v["subject"] for v in by_type["version"]} == {f"p{i}" for i in range(5)}
        assert len(by_type["assertion"]) == 5
        # The write happened: a new export holds it.
        again = io.StringIO()
        monkeypatch.undo()
        export(store, again, tenant_id="t", kind=ExportKind.LEDGER)
        assert sum('"type":"version"' in line for line in again.getvalue().splitlines()) == 10
    finally:
        store.close()
