"""``sgam export`` and ``sgam import --restore``: JSON Lines out of a store and back.

``current`` is the facts valid at ``as_of`` as known at ``known_at`` (default now);
``history`` every version of every fact, retired ones included, with its system times;
``ledger`` everything that determines every answer (:mod:`graph.stores.transfer`), which
``restore`` writes into an empty tenant exactly as it was. All of it streams: stores are
read page by page after keyset cursors, and restore writes batches of
:data:`graph.stores.transfer.PAGE` records.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from enum import StrEnum
from typing import IO, Any, cast

from api.limits import MAX_BODY_DEPTH, nests_deeper_than
from api.transfer.importer import NotJSON, NotPortableJSON, load_json
from graph.errors import ValidationError, invalid
from graph.model import FactQuery
from graph.port import Store
from graph.stores.transfer import (
    PAGE,
    RECORD_ORDER,
    Record,
    TransferStore,
    batches,
    check_instants,
    ensure_empty,
)
from graph.timeutil import utcnow


class ExportKind(StrEnum):
    CURRENT = "current"
    HISTORY = "history"
    LEDGER = "ledger"


def _transfer(store: Store) -> TransferStore:
    if not (hasattr(store, "export_records") and hasattr(store, "restore_records")):
        raise invalid(f"the store {store.url!r} cannot export or restore", field="store")
    return cast(TransferStore, store)


def current_facts(
    store: Store, *, tenant_id: str, as_of: datetime | None, known_at: datetime | None
) -> Iterator[Record]:
    now = utcnow()
    after: tuple[str, str, str] | None = None
    while True:
        q = FactQuery(as_of=as_of or now, known_at=known_at or now, limit=PAGE, after=after)
        page = store.facts(tenant_id=tenant_id, query=q)
        for f in page:
            yield f.model_dump(mode="json", exclude={"tenant_id"})
        if len(page) < PAGE:
            return
        last = page[-1]
        after = (last.subject, last.predicate, last.fact_id)


def records(
    store: Store,
    *,
    tenant_id: str,
    kind: ExportKind,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
) -> Iterator[Record]:
    if kind != ExportKind.CURRENT and (as_of is not None or known_at is not None):
        raise invalid("--as-of and --known-at select current facts only", field="as_of")
    source = _transfer(store)
    # Every page from one state of the store where it can give one (SQLite): a tenant
    # exported while it is written is not cut between two of its writes.
    with source.export_snapshot():
        if kind == ExportKind.CURRENT:
            yield from current_facts(store, tenant_id=tenant_id, as_of=as_of, known_at=known_at)
        elif kind == ExportKind.HISTORY:
            for r in source.export_records(tenant_id=tenant_id, kind="version"):
                yield {k: v for k, v in r.items() if k not in ("type", "timeline_key")}
        else:
            for t in RECORD_ORDER:
                yield from source.export_records(tenant_id=tenant_id, kind=t)


def export(
    store: Store,
    out: IO[str],
    *,
    tenant_id: str,
    kind: ExportKind,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
) -> int:
    """Write one JSON object per line; return how many (a ledger's end record aside)."""
    n = 0
    for r in records(store, tenant_id=tenant_id, kind=kind, as_of=as_of, known_at=known_at):
        out.write(json.dumps(r, separators=(",", ":")) + "\n")
        n += 1
    if kind == ExportKind.LEDGER:
        # Written only once every page was: a restore refuses a ledger without it, so an
        # export cut short (a failed read, a broken pipe) never restores as a whole one.
        out.write(json.dumps({"type": END, "records": n}, separators=(",", ":")) + "\n")
    return n


# A record is one level around what a request body may hold (an episode's content).
MAX_RECORD_DEPTH = MAX_BODY_DEPTH + 1


def _record(number: int, line: bytes) -> Any:
    """One line's JSON; an error naming the line for anything an export never writes."""
    if nests_deeper_than(line, MAX_RECORD_DEPTH):  # json.loads would recurse past the stack
        raise invalid(
            f"line {number}: nests deeper than {MAX_RECORD_DEPTH} levels of objects and arrays",
            field="line",
        )
    try:
        return load_json(line)
    except NotJSON as e:
        raise invalid(f"line {number}: not valid JSON: {e}", field="line") from e
    except NotPortableJSON as e:
        raise invalid(f"line {number}: not a ledger record: {e}", field="line") from e


END = "end"


def _parsed(stream: IO[bytes]) -> Iterator[Record]:
    """The ledger's records, up to its end record, which must be there and count them."""
    n = 0
    end: Any = None
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        r = _record(number, line)
        if not isinstance(r, dict):
            raise invalid(f"line {number}: not a ledger record", field="line")
        if end is not None:
            raise invalid(f"line {number}: a record after the ledger's end record", field="line")
        if r.get("type") == END:
            end = r
            continue
        try:
            check_instants(r)
        except ValidationError as e:
            raise invalid(f"line {number} ({r.get('type')} record): {e}", field="line") from e
        n += 1
        yield r
    if end is None:
        raise invalid(
            f"the ledger has no end record after {n} records: the export was cut short"
            " (restore one that finished; what was written is the tenant's to purge)",
            field="line",
        )
    if end.get("records") != n:
        raise invalid(
            f"the ledger's end record counts {end.get('records')!r} records, the file holds {n}",
            field="line",
        )


def restore(store: Store, stream: IO[bytes], *, tenant_id: str) -> int:
    """Write a ledger export into an empty tenant as it was; return the records written.

    Stops at the first bad record (a ledger is restored whole or not trusted); what was
    written until then is the tenant's to purge.
    """
    target = _transfer(store)
    # Every kind a ledger holds, a first record of each at most: a tenant left with only
    # some kinds (a restore of an edited ledger, a purge cut short) is not empty either.
    ensure_empty(
        any(
            next(iter(target.export_records(tenant_id=tenant_id, kind=t)), None) is not None
            for t in RECORD_ORDER
        ),
        tenant_id=tenant_id,
    )
    n = 0
    try:
        for batch in batches(_parsed(stream)):
            target.restore_records(tenant_id=tenant_id, records=batch)
            n += len(batch)
    except (KeyError, TypeError, ValueError, OverflowError) as e:
        # OverflowError: a number or a time the store cannot hold (seq = 2**70).
        raise invalid(f"not a ledger record after {n} records: {e}", field="line") from e
    return n


__all__ = ["ExportKind", "current_facts", "export", "records", "restore"]
