"""``import --restore`` of ledgers no export writes (edited by hand or by a tool), and
into tenants that are not empty: refused with a clear error, or reproduced exactly.

Real SQLite files; the ledger is a real export of a small tenant (two schema versions,
an entity, an episode, a superseded fact: a retired version and two assertions).
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from api.transfer.exporter import ExportKind, export, restore
from graph.errors import ConflictError, ValidationError
from graph.model import EpisodeCreate, MemoryDelta
from graph.schema import MemorySchema
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore
from graph.timeutil import format_instant, from_db, utcnow

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _ledger_of(store: SqliteStore, tenant: str) -> list[dict[str, object]]:
    buf = io.StringIO()
    export(store, buf, tenant_id=tenant, kind=ExportKind.LEDGER)
    return [json.loads(x) for x in buf.getvalue().splitlines()]


def source_ledger(tmp_path: Path) -> list[dict[str, object]]:
    """The ledger records of a small tenant, its end record last."""
    s = SqliteStore(tmp_path / "source.db")
    s.init()
    try:
        svc = MemoryService(s)
        svc.put_schema(tenant_id="t", schema=MemorySchema())
        city = {"name": "city", "value_type": "string"}
        svc.put_schema(tenant_id="t", schema=MemorySchema.model_validate({"predicates": [city]}))
        svc.add_episode(
            tenant_id="t", body=EpisodeCreate(episode_id="e1", content="x", occurred_at=T0)
        )
        for day, city in ((0, "Oslo"), (3, "Rome")):  # Rome supersedes Oslo: a retired row
            delta = MemoryDelta(
                subject="ann",
                predicate="city",
                value=city,
                valid_from=T0 + timedelta(days=day),
                source_episode_id="e1",
            )
            svc.write_facts(tenant_id="t", deltas=[delta])
        return _ledger_of(s, "t")
    finally:
        s.close()


def text(records: list[dict[str, object]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _naive(instant: object) -> str:
    """The same instant without its offset, as an edited ledger may hold it."""
    assert isinstance(instant, str)
    assert instant.endswith("Z")
    return instant[:-1]


# -- 2. naive timestamps ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("kind", "field"),
    [
        ("entity", "created_at"),
        ("episode", "occurred_at"),
        ("episode", "recorded_at"),
        ("version", "valid_from"),
        ("version", "retired_at"),
        ("assertion", "recorded_at"),
        ("assertion", "valid_from"),
    ],
)
def test_a_timestamp_without_an_offset_is_refused_naming_its_line_and_field(
    tmp_path: Path, kind: str, field: str
) -> None:
    """It was read in the restoring machine's time zone, and restored."""
    records = source_ledger(tmp_path)
    # The last record of that kind holding the field: the records before it of its kind
    # are in the same batch, those of the kinds before it were written already.
    number = max(i for i, r in enumerate(records, 1) if r["type"] == kind and r.get(field))
    records[number - 1][field] = _naive(records[number - 1][field])
    target = SqliteStore(tmp_path / "target.db")
    target.init()
    try:
        with pytest.raises(ValidationError) as caught:
            restore(target, io.BytesIO(text(records)), tenant_id="t")
        assert str(caught.value) == (
            f"line: line {number} ({kind} record): {field}: timestamp"
            f" {records[number - 1][field]} has no UTC offset; add one such as 'Z'"
        )
        # Nothing of the bad record's kind or after it was written: what is there is
        # batches before it, as they were (a batch is written once the next is begun).
        written = _ledger_of(target, "t")[:-1]
        assert all(r["type"] != kind for r in written)
        assert written == records[: len(written)]
    finally:
        target.close()


# -- 3. schema version numbers ---------------------------------------------------------
@pytest.mark.parametrize(
    ("versions", "refused", "expected"),
    [
        ((1, 3), 3, 2),  # a gap
        ((1, 1), 1, 2),  # a duplicate
        ((2, 3), 2, 1),  # not from 1
        ((2, 1), 2, 1),  # out of order
        ((1, None), 0, 2),  # no number: the model's default, 0
    ],
    ids=["gap", "duplicate", "from-2", "out-of-order", "missing"],
)
def test_a_schema_version_the_store_would_number_otherwise_is_refused(
    tmp_path: Path, versions: tuple[int, int | None], refused: int, expected: int
) -> None:
    """It was renumbered by put_schema (1, 2), silently: facts written under version 3
    then named another schema than the one they were written under."""
    records = source_ledger(tmp_path)
    schemas = [r for r in records if r["type"] == "schema"]
    assert [s["body"]["version"] for s in schemas] == [1, 2]  # type: ignore[index]
    for record, version in zip(schemas, versions, strict=True):
        body = record["body"]
        assert isinstance(body, dict)
        body.pop("version")
        if version is not None:
            body["version"] = version
    target = SqliteStore(tmp_path / "target.db")
    target.init()
    try:
        with pytest.raises(ValidationError) as caught:
            restore(target, io.BytesIO(text(records)), tenant_id="t")
        assert str(caught.value) == (
            f"version: a schema record of version {refused} where the tenant's next version"
            f" is {expected}: restore keeps schema versions' numbers, and a ledger's run"
            " 1, 2, 3 … in order"
        )
        # The versions before the refused one, as they were; nothing after.
        assert _ledger_of(target, "t")[:-1] == schemas[: expected - 1]
    finally:
        target.close()


def test_schema_versions_keep_their_numbers(tmp_path: Path) -> None:
    records = source_ledger(tmp_path)
    target = SqliteStore(tmp_path / "target.db")
    target.init()
    try:
        restore(target, io.BytesIO(text(records)), tenant_id="t")
        schema = target.get_schema(tenant_id="t")
        assert schema is not None
        assert schema.version == 2
        assert _ledger_of(target, "t") == records
    finally:
        target.close()


# -- 4. the restore clock --------------------------------------------------------------
@pytest.mark.parametrize(("kind", "field"), [("episode", "recorded_at"), ("entity", "created_at")])
def test_a_write_after_a_restore_records_after_its_episodes_and_entities(
    tmp_path: Path, kind: str, field: str
) -> None:
    """The latest restored instant is an episode's (or an entity's), a day ahead of the
    clock: the tenant's system clock moved past versions' and assertions' times only, so
    a fact written next recorded before that episode was recorded."""
    records = source_ledger(tmp_path)
    (record,) = (r for r in records if r["type"] == kind)
    assert isinstance(record[field], str)
    ahead = from_db(record[field]) + timedelta(days=1)
    record[field] = format_instant(ahead)
    target = SqliteStore(tmp_path / "target.db")
    target.init()
    try:
        restore(target, io.BytesIO(text(records)), tenant_id="t")
        assert ahead > utcnow()  # the latest instant restored, and still in the future
        late = MemoryDelta(
            subject="bob", predicate="city", value="Oslo", valid_from=T0, source_episode_id="e1"
        )
        written = MemoryService(target).write_facts(tenant_id="t", deltas=[late]).facts
        assert [f.recorded_at > ahead for f in written] == [True]
    finally:
        target.close()


# -- 5. an empty tenant ----------------------------------------------------------------
@pytest.mark.parametrize("kind", ["schema", "entity", "episode", "mention", "version", "assertion"])
def test_a_tenant_holding_records_of_any_one_kind_is_not_restored_into(
    tmp_path: Path, kind: str
) -> None:
    """Only schemas, entities and episodes were looked for: a tenant holding only
    mentions, versions or assertions (here: a restore of a ledger holding only those) was
    restored into, over what it held."""
    records = source_ledger(tmp_path)
    *body, end = records
    only = [r for r in body if r["type"] == kind]
    target = SqliteStore(tmp_path / "target.db")
    target.init()
    try:
        restore(target, io.BytesIO(text([*only, {**end, "records": len(only)}])), tenant_id="t")
        before = _ledger_of(target, "t")
        assert before == [*only, {**end, "records": len(only)}]
        with pytest.raises(ConflictError) as caught:
            restore(target, io.BytesIO(text(records)), tenant_id="t")
        assert str(caught.value) == (
            "tenant 't' already holds data: restore writes into an empty tenant"
        )
        assert _ledger_of(target, "t") == before  # nothing written
    finally:
        target.close()
