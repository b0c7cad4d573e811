"""The ledger as portable records: what a store exports and what it restores exactly.

A tenant's ledger is everything that determines every answer: its schema versions,
entities, episodes, mentions, every fact version with its system times
(``recorded_at``/``retired_at``) and every assertion with its ``seq`` and recorded time.
Each record is a JSON-ready dict with a ``type``; :func:`restore_records` writes them back
as they were through the store's own ledger primitives (:class:`~graph.port.LedgerTx`),
so nothing is decided again and nothing gets a new time or a new id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Literal, Protocol, get_args

from pydantic import BaseModel

from graph.errors import ConflictError, invalid
from graph.model import ConflictPolicy, Entity, Episode, EpisodeStatus, Fact
from graph.port import LedgerTx, Store
from graph.schema import MemorySchema
from graph.stores.codec import claim_from_dict, claim_to_dict
from graph.temporal import Assertion
from graph.timeutil import format_instant, from_db, parse_instant

Record = dict[str, Any]
RecordType = Literal["schema", "entity", "episode", "mention", "version", "assertion"]
RECORD_ORDER: tuple[RecordType, ...] = (
    "schema",
    "entity",
    "episode",
    "mention",
    "version",
    "assertion",
)
PAGE = 1000


class TransferStore(Protocol):
    """What export and restore need of a store, beyond :class:`graph.port.Store`."""

    def export_snapshot(self) -> AbstractContextManager[None]:
        """Inside it, this thread's export reads see one state of the store where the
        store can give one (SQLite); elsewhere it does nothing (Neo4j)."""

    def export_records(self, *, tenant_id: str, kind: RecordType) -> Iterator[Record]:
        """Every record of one type of the tenant, read page by page (keyset cursors)."""

    def restore_records(self, *, tenant_id: str, records: Sequence[Record]) -> None:
        """Write records of an export as they were (one type per call, in RECORD_ORDER)."""


# -- encoding ------------------------------------------------------------------------------
def schema_record(schema: MemorySchema) -> Record:
    return {"type": "schema", "body": schema.model_dump(mode="json")}


def entity_record(e: Entity) -> Record:
    return {"type": "entity", **e.model_dump(mode="json", exclude={"tenant_id"})}


def episode_record(e: Episode) -> Record:
    # needs_model is not in API answers (excluded from dumps) but is the queue's: which
    # workers may claim the episode. Older exports lack it (None: anyone may try).
    body = e.model_dump(mode="json", exclude={"tenant_id"})
    return {"type": "episode", **body, "needs_model": e.needs_model}


def mention_record(episode_id: str, entity_id: str) -> Record:
    return {"type": "mention", "episode_id": episode_id, "entity_id": entity_id}


def version_record(f: Fact, *, key: str) -> Record:
    return {
        "type": "version",
        "timeline_key": key,
        **f.model_dump(mode="json", exclude={"tenant_id"}),
    }


def _opt(t: Any) -> str | None:
    return None if t is None else format_instant(t)


def assertion_record(a: Assertion, *, key: str) -> Record:
    return {
        "type": "assertion",
        "timeline_key": key,
        "seq": a.seq,
        "kind": a.kind,
        "fact_id": a.fact_id,
        "recorded_at": format_instant(a.recorded_at),
        "valid_from": _opt(a.valid_from),
        "valid_to": _opt(a.valid_to),
        "claim": claim_to_dict(a.claim) if a.claim else None,
        "source_episode_id": a.source_episode_id,
        "policy": a.policy.value,
    }


# -- decoding ------------------------------------------------------------------------------
def _instant_fields(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(
        name
        for name, f in model.model_fields.items()
        if datetime in (f.annotation, *get_args(f.annotation))
    )


# The instants each record type holds. An export writes every one as RFC 3339 with its
# offset; one without (an edited ledger) would be read in the restoring machine's zone.
INSTANT_FIELDS: dict[str, tuple[str, ...]] = {
    "entity": _instant_fields(Entity),
    "episode": _instant_fields(Episode),
    "version": _instant_fields(Fact),
    "assertion": ("recorded_at", "valid_from", "valid_to"),
}


def check_instants(r: Record) -> None:
    """Refuse, naming the field, an instant of the record that is not RFC 3339 text with a
    UTC offset (a naive one is never guessed, as everywhere else)."""
    for name in INSTANT_FIELDS.get(str(r.get("type")), ()):
        value = r.get(name)
        if value is not None:
            parse_instant(value, field=name)


def _data(r: Record) -> dict[str, Any]:
    return {k: v for k, v in r.items() if k not in ("type", "timeline_key")}


def assertion_of(r: Record) -> Assertion:
    kind = r["kind"]
    if kind not in ("assert", "retract"):  # an edited ledger: never read as an assertion
        raise invalid(f"assertion kind {kind!r} is neither 'assert' nor 'retract'", field="kind")
    return Assertion(
        seq=int(r["seq"]),
        kind="retract" if kind == "retract" else "assert",
        fact_id=str(r["fact_id"]),
        recorded_at=from_db(r["recorded_at"]),
        valid_from=from_db(r["valid_from"]) if r.get("valid_from") else None,
        valid_to=from_db(r["valid_to"]) if r.get("valid_to") else None,
        claim=claim_from_dict(r["claim"]) if r.get("claim") else None,
        source_episode_id=r.get("source_episode_id"),
        policy=ConflictPolicy(r.get("policy", ConflictPolicy.REJECT.value)),
    )


def restore_records(store: Store, *, tenant_id: str, records: Sequence[Record]) -> None:
    """Write one batch of same-type records through the ledger primitives, as they were."""
    if not records:
        return
    kind = records[0].get("type")
    if any(r.get("type") != kind for r in records):
        raise invalid("one restore batch holds records of one type", field="type")
    if kind == "schema":
        for r in records:
            _restore_schema(store, tenant_id, MemorySchema.model_validate(r["body"]))
    elif kind == "episode":
        recorded = []
        for r in records:
            episode = Episode.model_validate({**_data(r), "tenant_id": tenant_id})
            if episode.status == EpisodeStatus.PROCESSING:
                # Its lease was held by a worker of the exporting store; here nobody
                # holds it, and a processing episode without a lease is never claimed.
                episode = episode.model_copy(update={"status": EpisodeStatus.PENDING})
            store.put_episode(episode=episode)
            store.save_episode_state(episode=episode)  # status, attempts, rejections
            recorded.append(episode.recorded_at)  # occurred_at is the source's, not ours
        with store.transaction() as tx:
            _clock_past(tx, tenant_id, recorded)
    elif kind == "version":
        facts = [Fact.model_validate({**_data(r), "tenant_id": tenant_id}) for r in records]
        keys = [str(r["timeline_key"]) for r in records]
        try:
            _insert_versions(store, tenant_id, facts, keys)
        except ConflictError:
            # Version ids name rows and are unique in a store; fact ids are per tenant. A
            # copy of a tenant restored into the store it came from meets its own version
            # ids: derive new ones (the same on every run) and keep everything else.
            renamed = [f.model_copy(update={"version_id": _derived(tenant_id, f)}) for f in facts]
            _insert_versions(store, tenant_id, renamed, keys)
    else:
        with store.transaction() as tx:
            if kind == "entity":
                ents = [
                    Entity.model_validate({**_data(r), "tenant_id": tenant_id}) for r in records
                ]
                tx.upsert_entities(tenant_id=tenant_id, entities=ents)
                _clock_past(tx, tenant_id, [e.created_at for e in ents])
            elif kind == "mention":
                pairs = [(str(r["episode_id"]), str(r["entity_id"])) for r in records]
                tx.mention(tenant_id=tenant_id, pairs=pairs)
            elif kind == "assertion":
                rows = [(str(r["timeline_key"]), assertion_of(r)) for r in records]
                tx.append_assertions(tenant_id=tenant_id, rows=rows)
                _clock_past(tx, tenant_id, [a.recorded_at for _, a in rows])
            else:
                raise invalid(f"unknown record type {kind!r}", field="type")


def _restore_schema(store: Store, tenant_id: str, schema: MemorySchema) -> None:
    """Store a schema version under its recorded number, or refuse: put_schema numbers
    versions itself, and facts name the version they were written under."""
    latest = store.get_schema(tenant_id=tenant_id)
    expected = 1 if latest is None else latest.version + 1
    if schema.version != expected:
        raise invalid(
            f"a schema record of version {schema.version} where the tenant's next version"
            f" is {expected}: restore keeps schema versions' numbers, and a ledger's run"
            " 1, 2, 3 … in order",
            field="version",
        )
    stored = store.put_schema(tenant_id=tenant_id, schema=schema)
    if stored.version != schema.version:  # another writer took the number meanwhile
        raise ConflictError(
            f"schema version {schema.version} was restored as {stored.version}: the tenant"
            " was written during the restore",
            tenant_id=tenant_id,
        )


def _insert_versions(
    store: Store, tenant_id: str, facts: Sequence[Fact], keys: Sequence[str]
) -> None:
    with store.transaction() as tx:
        tx.insert(tenant_id=tenant_id, facts=facts, keys=keys)
        _clock_past(tx, tenant_id, [t for f in facts for t in (f.recorded_at, f.retired_at)])


def _derived(tenant_id: str, fact: Fact) -> str:
    """A version id for a restored copy: ``v_`` and 32 hex digits, like every version id."""
    digest = hashlib.sha256(f"{tenant_id}\x00{fact.version_id}".encode()).hexdigest()
    return f"v_{digest[:32]}"


def _clock_past(tx: LedgerTx, tenant_id: str, instants: Sequence[datetime | None]) -> None:
    """Move the tenant's system clock to the latest restored instant the store recorded
    (versions', assertions', episodes', entities'): the ledger may come from a machine
    whose clock ran ahead, and a later write must record after it."""
    latest = max((t for t in instants if t is not None), default=None)
    if latest is not None:
        tx.system_time(tenant_id=tenant_id, wall=latest)


def batches(records: Iterable[Record], size: int = PAGE) -> Iterator[list[Record]]:
    """Consecutive records of one type, at most ``size`` at a time; the types must come
    in :data:`RECORD_ORDER` (a ledger export does), or restore would break references."""
    batch: list[Record] = []
    rank = -1
    for r in records:
        t = r.get("type")
        if t not in RECORD_ORDER:
            raise invalid(f"unknown record type {t!r}: not a ledger export", field="type")
        r_rank = RECORD_ORDER.index(t)
        if r_rank < rank:
            raise invalid(f"a {t} record after the {RECORD_ORDER[rank]} records", field="type")
        if batch and (r_rank != rank or len(batch) >= size):
            yield batch
            batch = []
        rank = r_rank
        batch.append(r)
    if batch:
        yield batch


def ensure_empty(has_data: bool, *, tenant_id: str) -> None:
    if has_data:
        raise ConflictError(
            f"tenant {tenant_id!r} already holds data: restore writes into an empty tenant",
            tenant_id=tenant_id,
        )


__all__ = [
    "INSTANT_FIELDS",
    "RECORD_ORDER",
    "Record",
    "RecordType",
    "TransferStore",
    "assertion_of",
    "assertion_record",
    "batches",
    "check_instants",
    "ensure_empty",
    "entity_record",
    "episode_record",
    "mention_record",
    "restore_records",
    "schema_record",
    "version_record",
]
