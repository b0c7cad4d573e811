"""The production store: the storage port over Neo4j, every query a template in ``cypher/``.

Model (docs/graph-model.md): entities and episodes are nodes; every version of a fact is
a ``FACT`` relationship from the subject entity to the object entity or to a shared
``Value`` node, carrying valid time, system time and provenance as native properties.
The database enforces the ledger's invariant: ``open_key`` exists only on a version that
is current and open, under a relationship uniqueness constraint.

The store holds one :class:`~graph.stores.neo4j.connection.Neo4jConnection` (the driver,
the one ``run()`` and the error translation) and builds its search (:mod:`.search`) and
its extraction queue (:mod:`.queue`) over it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import Any, TypeVar

from neo4j import ManagedTransaction, Transaction

from graph.erasure import EraseReads
from graph.errors import ConflictError, TransientStoreError, invalid
from graph.model import (
    TYPE_RE,
    Direction,
    Entity,
    Episode,
    Fact,
    FactQuery,
    Neighborhood,
    reserved_type_problem,
)
from graph.schema import MemorySchema, schema_from_json
from graph.stores.codec import episode_hash
from graph.stores.neo4j import transfer
from graph.stores.neo4j.codec import (
    Row,
    assertion_from_props,
    assertion_row,
    at_utc,
    entity_from_props,
    entity_terms,
    episode_from_props,
    episode_props,
    fact_from_props,
    fact_row,
    text,
    to_neo,
    value_key,
)
from graph.stores.neo4j.connection import Neo4jConnection, strip_credentials
from graph.stores.neo4j.erasure import TEMPLATES as ERASE_TEMPLATES
from graph.stores.neo4j.erasure import Neo4jEraseOps
from graph.stores.neo4j.queue import Neo4jQueue
from graph.stores.neo4j.search import Neo4jSearch
from graph.stores.transfer import Record, RecordType, restore_records
from graph.stores.traversal import breadth_first
from graph.temporal import Assertion
from graph.timeutil import utcnow

DEFAULT_EMBEDDING_DIM = 384
NO_LIMIT = 2**62  # LIMIT takes no null: "no limit" is a number no read reaches
PURGE_BATCH = 5000
SCHEMA_PUT_ATTEMPTS = 5
_type_re = re.compile(TYPE_RE)

# The templates this module runs; init() fails at start when one is missing.
TEMPLATES = {
    "entities.get",
    "episodes.create",
    "episodes.get",
    "episodes.save_state",
    "facts.by_object",
    "facts.by_predicate",
    "facts.by_source",
    "facts.by_subject",
    "facts.by_tenant",
    "facts.history",
    "graph.hop",
    "ledger.assertions",
    "ledger.current_fact",
    "ledger.current_versions",
    "ledger.holds_lease",
    "ledger.delete_episode_data",
    "ledger.doomed_endpoints",
    "ledger.episode_timelines",
    "ledger.episodes_occurred_at",
    "ledger.lock_entities",
    "ledger.lock_episodes",
    "ledger.lock_values",
    "ledger.lock_timelines",
    "ledger.system_time",
    "ledger.write_batch",
    "schema.setup",
    "schemas.get",
    "schemas.latest_version",
    "schemas.put",
    "store.ping",
    "tenant.purge",
    "tenant.purge_facts",
}


# -- the ledger primitives ----------------------------------------------------------------
# The mutations a ledger write buffers, in the order ledger.write_batch applies them (the
# order graph.ledger calls them in, and the global lock order).
_STAGES = (
    "entities",
    "retire",
    "lock_entities",
    "values",
    "relations",
    "literals",
    "assertions",
    "episodes",
    "mentions",
)
_STAGE = {name: i for i, name in enumerate(_STAGES)}


T = TypeVar("T")


class Neo4jLedgerTx:
    """The ledger primitives over one explicit (write) driver transaction.

    Reads run at once. Mutations are buffered and sent together as one
    ``ledger.write_batch`` statement: before the next read, before a mutation that would
    have to run before one already buffered, and before commit (:meth:`flush`). So a
    batch's upserts, retirements, inserts, ledger entries and mentions cost one round
    trip and one plan instead of eight, and run in exactly the order they were asked for.
    """

    def __init__(self, conn: Neo4jConnection, tx: Transaction | ManagedTransaction) -> None:
        # A managed (read) transaction for a forget dry run's reads (Neo4jEraseReads).
        self._conn = conn
        self._tx = tx
        self._locked: set[str] = set()  # entities this transaction holds (or will) the lock of
        self._pending: dict[str, list[Any]] = {}
        self._stage = -1  # the latest stage buffered
        self._retired_at: datetime | None = None
        self._tenant = ""  # the tenant of the buffered mutations
        # The versions ledger.lock_timelines returned with its locks, for the ledger's
        # current_versions call that follows; gone at the next write or read.
        self._locked_versions: (
            tuple[str, frozenset[str], datetime | None, dict[str, list[Fact]]] | None
        ) = None

    def _run(self, name: str, **params: Any) -> list[Row]:
        self.flush()
        self._locked_versions = None
        return self._conn.run(name, params, tx=self._tx)

    def _buffer(self, stage: str, rows: list[Any]) -> None:
        self._locked_versions = None
        if _STAGE[stage] < self._stage or (_STAGE[stage] == self._stage and stage in self._pending):
            self.flush()  # keep the order the ledger asked for
        self._pending.setdefault(stage, []).extend(rows)
        self._stage = _STAGE[stage]

    def flush(self) -> None:
        """Send the buffered mutations as one statement."""
        if not self._pending:
            return
        params: dict[str, Any] = {name: self._pending.get(name, []) for name in _STAGES}
        params["tenant_id"] = self._tenant
        params["retired_at"] = to_neo(self._retired_at)
        self._pending = {}
        self._stage = -1
        self._retired_at = None
        self._conn.run("ledger.write_batch", params, tx=self._tx)

    def _tenant_of(self, tenant_id: str) -> None:
        if self._pending and tenant_id != self._tenant:
            self.flush()
        self._tenant = tenant_id

    def lock_timelines(
        self, *, tenant_id: str, keys: Sequence[str], since: datetime | None = None
    ) -> None:
        if keys:
            rows = self._run(
                "ledger.lock_timelines",
                tenant_id=tenant_id,
                keys=sorted(keys),
                since=None if since is None else to_neo(since),
            )
            versions: dict[str, list[Fact]] = {}
            for r in rows:
                f = fact_from_props(r["fact"])
                versions.setdefault(r["fact"]["timeline_key"], []).append(f)
            self._locked_versions = (tenant_id, frozenset(keys), since, versions)

    def holds_lease(self, *, tenant_id: str, episode_id: str, owner: str) -> bool:
        rows = self._run(
            "ledger.holds_lease", tenant_id=tenant_id, episode_id=episode_id, owner=owner
        )
        return bool(rows) and bool(rows[0]["held"])

    def system_time(self, *, tenant_id: str, wall: datetime) -> datetime:
        (row,) = self._run("ledger.system_time", tenant_id=tenant_id, wall=to_neo(wall))
        return at_utc(row["at"])

    def put_episode(self, *, episode: Episode) -> tuple[Episode, bool]:
        h = episode_hash(episode)
        rows = self._run("episodes.get", tenant_id=episode.tenant_id, episode_id=episode.episode_id)
        if not rows:
            try:
                self._run("episodes.create", props=episode_props(episode, h))
            except ConflictError as e:
                # Created concurrently: the constraint broke this transaction; run it
                # again (MemoryService.in_transaction), and it finds the stored episode.
                raise TransientStoreError(f"episode created concurrently: {e}") from e
            return episode.model_copy(update={"content_hash": h}), True
        existing = episode_from_props(rows[0]["episode"])
        if existing.content_hash != h:
            raise ConflictError(
                f"episode {episode.episode_id!r} already exists with other content",
                episode_id=episode.episode_id,
            )
        return existing, False

    def episodes_occurred_at(self, *, tenant_id: str, episode_ids: set[str]) -> dict[str, datetime]:
        if not episode_ids:
            return {}
        rows = self._run(
            "ledger.episodes_occurred_at", tenant_id=tenant_id, episode_ids=sorted(episode_ids)
        )
        return {r["episode_id"]: at_utc(r["occurred_at"]) for r in rows}

    def entities(self, *, tenant_id: str, entity_ids: set[str]) -> dict[str, Entity]:
        if not entity_ids:
            return {}
        rows = self._run("entities.get", tenant_id=tenant_id, entity_ids=sorted(entity_ids))
        return {r["entity"]["entity_id"]: entity_from_props(tenant_id, r["entity"]) for r in rows}

    def upsert_entities(self, *, tenant_id: str, entities: Sequence[Entity]) -> None:
        if not entities:
            return
        for e in entities:
            # The type becomes a label: only a name of the whitelisted shape may get there.
            if not _type_re.fullmatch(e.entity_type):
                raise invalid(
                    f"entity type {e.entity_type!r} is not a type name", field="entity_type"
                )
            if (why := reserved_type_problem(e.entity_type)) is not None:
                raise invalid(why, field="entity_type")  # never one of the store's labels
        rows = [
            {
                "entity_id": e.entity_id,
                "entity_type": e.entity_type,
                "name": e.name,
                "aliases": list(e.aliases),
                "terms": entity_terms(tenant_id, e.name, list(e.aliases)),
                "summary": e.summary,
                "created_at": text(e.created_at),
            }
            for e in sorted(entities, key=lambda e: e.entity_id)  # the global lock order
        ]
        self._tenant_of(tenant_id)
        self._buffer("entities", rows)
        self._locked.update(e.entity_id for e in entities)

    def current_versions(
        self, *, tenant_id: str, keys: Sequence[str], since: datetime | None = None
    ) -> dict[str, list[Fact]]:
        out: dict[str, list[Fact]] = {k: [] for k in keys}
        locked, self._locked_versions = self._locked_versions, None
        if (
            locked is not None
            and locked[0] == tenant_id
            and locked[1].issuperset(keys)
            and locked[2] == since
        ):
            # What lock_timelines read with its locks: nothing was run or buffered since.
            for k in keys:
                out[k] = list(locked[3].get(k, []))
            return out
        if keys:
            bound = None if since is None else to_neo(since)
            for r in self._run(
                "ledger.current_versions", tenant_id=tenant_id, keys=list(keys), since=bound
            ):
                f = r["fact"]
                out[f["timeline_key"]].append(fact_from_props(f))
        return out

    def current_fact(self, *, tenant_id: str, fact_id: str) -> Fact | None:
        rows = self._run("ledger.current_fact", tenant_id=tenant_id, fact_id=fact_id)
        return fact_from_props(rows[0]["fact"]) if rows else None

    def assertions(self, *, tenant_id: str, keys: Sequence[str]) -> dict[str, list[Assertion]]:
        out: dict[str, list[Assertion]] = {k: [] for k in keys}
        if keys:
            for r in self._run("ledger.assertions", tenant_id=tenant_id, keys=list(keys)):
                p = r["assertion"]
                out[p["timeline_key"]].append(assertion_from_props(p))
        return out

    def append_assertions(self, *, tenant_id: str, rows: Sequence[tuple[str, Assertion]]) -> None:
        if rows:
            self._tenant_of(tenant_id)
            self._buffer("assertions", [assertion_row(key, a) for key, a in rows])

    def retire(self, *, tenant_id: str, version_ids: Sequence[str], at: datetime) -> None:
        if version_ids:
            self._tenant_of(tenant_id)
            if self._retired_at is not None and self._retired_at != at:
                self.flush()  # one retirement time per statement
            self._buffer("retire", list(version_ids))
            self._retired_at = at

    def insert(self, *, tenant_id: str, facts: Sequence[Fact], keys: Sequence[str]) -> None:
        if not facts:
            return
        relations: list[Row] = []
        literals: list[Row] = []
        ends: set[str] = set()
        values: dict[str, Row] = {}
        for f, key in zip(facts, keys, strict=True):
            row = fact_row(f, tenant_id=tenant_id, key=key)
            ends.add(f.subject)
            if f.object is not None:
                ends.add(f.object)
                relations.append(row)
            else:
                vk = value_key(f)
                row["value_key"] = vk
                literals.append(row)
                if vk not in values:
                    values[vk] = {
                        "value_key": vk,
                        "value": f.value,
                        "value_type": row["value_type"],
                    }
        self._tenant_of(tenant_id)
        # Write-lock the end nodes in the one global order (cypher/ledger_lock_entities.cypher).
        if ids := sorted(ends - self._locked):
            self._buffer("lock_entities", ids)
            self._locked.update(ids)
        if values:
            self._buffer("values", [values[k] for k in sorted(values)])
        if relations:
            self._buffer("relations", relations)
        if literals:
            self._buffer("literals", literals)

    def _lock_nodes(
        self,
        *,
        tenant_id: str,
        entity_ids: Iterable[str] = (),
        values: Sequence[Row] = (),
        episode_ids: Iterable[str] = (),
    ) -> None:
        """Write-lock nodes in the one global order (cypher/ledger_lock_entities.cypher)."""
        if ids := sorted(set(entity_ids)):
            self._run("ledger.lock_entities", tenant_id=tenant_id, entity_ids=ids)
        if values:
            ordered = sorted(values, key=lambda v: str(v["value_key"]))
            self._run("ledger.lock_values", tenant_id=tenant_id, values=ordered)
        if eps := sorted(set(episode_ids)):
            self._run("ledger.lock_episodes", tenant_id=tenant_id, episode_ids=eps)

    def mention(self, *, tenant_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        if pairs:
            self._tenant_of(tenant_id)
            self._buffer("episodes", sorted({ep for ep, _ in pairs}))
            rows = [{"episode_id": ep, "entity_id": ent} for ep, ent in pairs]
            self._buffer("mentions", rows)

    def episode_timelines(self, *, tenant_id: str, episode_id: str) -> set[str]:
        rows = self._run("ledger.episode_timelines", tenant_id=tenant_id, episode_id=episode_id)
        return {r["key"] for r in rows}

    def delete_episode_data(self, *, tenant_id: str, episode_id: str) -> None:
        (ends,) = self._run("ledger.doomed_endpoints", tenant_id=tenant_id, episode_id=episode_id)
        self._lock_nodes(
            tenant_id=tenant_id,
            entity_ids=ends["entity_ids"],
            # They exist (the doomed facts point at them): the MERGE only matches.
            values=[
                {"value_key": k, "value": None, "value_type": None} for k in ends["value_keys"]
            ],
            episode_ids=[episode_id],
        )
        self._run("ledger.delete_episode_data", tenant_id=tenant_id, episode_id=episode_id)


class Neo4jEraseTx(Neo4jLedgerTx, Neo4jEraseOps):
    """The ledger primitives and the erasure ones (graph.erasure), in one transaction."""


# -- the store ----------------------------------------------------------------------------
class Neo4jEraseReads(Neo4jEraseTx):
    """What a forget dry run reads (:class:`graph.erasure.EraseReads`): the erase
    transaction's own templates, in a managed read transaction, and every version of a
    timeline (``erase.versions``). Nothing here writes (a read transaction would refuse
    it): the dry run's changes stay in memory (graph.erasure.Preview)."""

    def timeline_versions(self, *, tenant_id: str, keys: Sequence[str]) -> dict[str, list[Fact]]:
        out: dict[str, list[Fact]] = {k: [] for k in keys}
        if keys:
            for r in self._run("erase.versions", tenant_id=tenant_id, keys=list(keys)):
                f = r["fact"]
                out[f["timeline_key"]].append(fact_from_props(f))
        return out


class Neo4jStore:
    """The storage port over one Neo4j database; ``search`` and ``queue`` share its
    connection."""

    def __init__(
        self,
        conn: Neo4jConnection,
        *,
        url: str,
        embedding_dim: int = DEFAULT_EMBEDDING_DIM,
    ) -> None:
        self.url = url
        self.conn = conn
        self._embedding_dim = embedding_dim
        self.search = Neo4jSearch(conn)
        self.queue = Neo4jQueue(conn)

    @classmethod
    def from_url(cls, url: str) -> Neo4jStore:
        """Connect as :meth:`Neo4jConnection.from_url` does; vector indexes get
        SGAM_EMBEDDING_DIM dimensions (default 384)."""
        dim_text = os.environ.get("SGAM_EMBEDDING_DIM") or str(DEFAULT_EMBEDDING_DIM)
        if not dim_text.isdigit() or not 1 <= int(dim_text) <= 4096:
            raise invalid(
                f"SGAM_EMBEDDING_DIM must be 1..4096, not {dim_text!r}", field="embedding_dim"
            )
        conn = Neo4jConnection.from_url(url)
        return cls(conn, url=strip_credentials(url), embedding_dim=int(dim_text))

    def _run(self, name: str, params: dict[str, Any]) -> list[Row]:
        return self.conn.run(name, params)

    # -- lifecycle -------------------------------------------------------------------------
    def init(self) -> None:
        """Load and check every template, then create constraints and indexes (idempotent)."""
        self.conn.load_templates(TEMPLATES | ERASE_TEMPLATES)
        self._run("schema.setup", {"embedding_dim": self._embedding_dim})

    def close(self) -> None:
        self.conn.close()

    def ping(self) -> None:
        self._run("store.ping", {})

    @contextmanager
    def transaction(self) -> Iterator[Neo4jLedgerTx]:
        """One explicit write transaction: commit on success, roll back on any exception."""
        with self.conn.transaction() as tx:
            ledger_tx = Neo4jLedgerTx(self.conn, tx)
            yield ledger_tx
            ledger_tx.flush()  # the buffered mutations, before the commit

    def erase_snapshot(self, work: Callable[[EraseReads], T], /) -> T:
        """A forget dry run's reads (graph.erasure), on one managed read transaction
        (run again whole on a transient error)."""
        return self.conn.read(lambda tx: work(Neo4jEraseReads(self.conn, tx)))

    @contextmanager
    def erase_transaction(self) -> Iterator[Neo4jEraseTx]:
        """A write transaction with erasure and retention primitives (graph.erasure)."""
        with self.conn.transaction() as tx:
            erase_tx = Neo4jEraseTx(self.conn, tx)
            yield erase_tx
            erase_tx.flush()

    def expired_timelines(self, *, tenant_id: str, predicate: str, before: datetime) -> list[str]:
        """A read transaction of its own (a reader of a cluster), not the writer's."""
        rows = self._run(
            "retention.expired_timelines",
            {"tenant_id": tenant_id, "predicate": predicate, "before": to_neo(before)},
        )
        return [r["key"] for r in rows]

    # -- episodes --------------------------------------------------------------------------
    def put_episode(self, *, episode: Episode) -> tuple[Episode, bool]:
        h = episode_hash(episode)
        existing = self.get_episode(tenant_id=episode.tenant_id, episode_id=episode.episode_id)
        if existing is None:
            try:
                self._run("episodes.create", {"props": episode_props(episode, h)})
                return episode.model_copy(update={"content_hash": h}), True
            except ConflictError:
                # Created concurrently: treat it as any repeated post.
                existing = self.get_episode(
                    tenant_id=episode.tenant_id, episode_id=episode.episode_id
                )
                if existing is None:
                    raise
        if existing.content_hash != h:
            raise ConflictError(
                f"episode {episode.episode_id!r} already exists with other content",
                episode_id=episode.episode_id,
            )
        return existing, False

    def get_episode(self, *, tenant_id: str, episode_id: str) -> Episode | None:
        rows = self._run("episodes.get", {"tenant_id": tenant_id, "episode_id": episode_id})
        return episode_from_props(rows[0]["episode"]) if rows else None

    def save_episode_state(self, *, episode: Episode) -> None:
        self._run(
            "episodes.save_state",
            {
                "tenant_id": episode.tenant_id,
                "episode_id": episode.episode_id,
                "status": episode.status.value,
                "attempts": episode.attempts,
                "last_error": episode.last_error,
                "rejected_json": json.dumps(episode.rejected),
                # None keeps what the queue recorded (a restore sets the exported one).
                "usage_json": None if episode.usage is None else episode.usage.model_dump_json(),
            },
        )

    # -- state reads -----------------------------------------------------------------------
    def facts(self, *, tenant_id: str, query: FactQuery) -> list[Fact]:
        name = self._facts_template(tenant_id=tenant_id, query=query)
        every: Row = {
            "tenant_id": tenant_id,
            "subject": query.subject,
            "predicate": query.predicate,
            "object": query.object,
            "memory_type": query.memory_type,
            "source_episode_id": query.source_episode_id,
            "as_of": to_neo(query.as_of),
            "known_at": to_neo(query.known_at),
            "after": list(query.after) if query.after is not None else None,
            "limit": query.limit,
        }
        params = {k: v for k, v in every.items() if k in self.conn.templates[name].params}
        return [fact_from_props(r["fact"]) for r in self._run(name, params)]

    def _facts_template(self, *, tenant_id: str, query: FactQuery) -> str:
        """The template anchored on the most selective filter given."""
        if query.subject is not None:
            return "facts.by_subject"
        if query.object is not None:
            return "facts.by_object"
        if query.predicate is not None:
            return "facts.by_predicate"
        # A deleted episode's ledger entries are gone, but old versions still cite it.
        if query.source_episode_id is not None and self.get_episode(
            tenant_id=tenant_id, episode_id=query.source_episode_id
        ):
            return "facts.by_source"
        return "facts.by_tenant"

    def history(
        self,
        *,
        tenant_id: str,
        subject: str,
        predicate: str,
        object: str | None,
        known_at: datetime,
        limit: int | None = None,
        after: tuple[datetime, str] | None = None,
    ) -> list[Fact]:
        rows = self._run(
            "facts.history",
            {
                "tenant_id": tenant_id,
                "subject": subject,
                "predicate": predicate,
                "object": object,
                "known_at": to_neo(known_at),
                "after_from": to_neo(after[0]) if after else None,
                "after_fact": after[1] if after else None,
                "limit": NO_LIMIT if limit is None else limit,
            },
        )
        return [fact_from_props(r["fact"]) for r in rows]

    def entity(self, *, tenant_id: str, entity_id: str) -> Entity | None:
        found = self._entities(tenant_id=tenant_id, entity_ids=[entity_id])
        return found[0] if found else None

    def _entities(self, *, tenant_id: str, entity_ids: Sequence[str]) -> list[Entity]:
        rows = self._run("entities.get", {"tenant_id": tenant_id, "entity_ids": list(entity_ids)})
        return [entity_from_props(tenant_id, r["entity"]) for r in rows]

    def neighbors(
        self,
        *,
        tenant_id: str,
        entity_id: str,
        depth: int,
        predicates: Sequence[str] | None,
        direction: Direction,
        as_of: datetime,
        known_at: datetime,
        limit: int | None = None,
    ) -> Neighborhood:
        """Breadth first (graph.stores.traversal), one ``graph.hop`` template call per level."""

        def hop(frontier: list[str], cap: int | None) -> list[Fact]:
            rows = self._run(
                "graph.hop",
                {
                    "tenant_id": tenant_id,
                    "frontier": frontier,
                    "outgoing": direction in (Direction.OUT, Direction.BOTH),
                    "incoming": direction in (Direction.IN, Direction.BOTH),
                    "predicates": list(predicates) if predicates else None,
                    "as_of": to_neo(as_of),
                    "known_at": to_neo(known_at),
                    "limit": NO_LIMIT if cap is None else cap,
                },
            )
            return [fact_from_props(r["fact"]) for r in rows]

        seen, ordered = breadth_first(entity_id, depth, hop, limit)
        ents = self._entities(tenant_id=tenant_id, entity_ids=sorted(seen))
        return Neighborhood(entities=ents, facts=ordered)

    # -- schemas ---------------------------------------------------------------------------
    def get_schema(self, *, tenant_id: str) -> MemorySchema | None:
        rows = self._run("schemas.get", {"tenant_id": tenant_id})
        return schema_from_json(rows[0]["body_json"]) if rows else None

    def put_schema(self, *, tenant_id: str, schema: MemorySchema) -> MemorySchema:
        """Next version number; a concurrent put of the same number loses on the
        (tenant_id, version) constraint and takes the number after."""
        for attempt in range(1, SCHEMA_PUT_ATTEMPTS + 1):
            rows = self._run("schemas.latest_version", {"tenant_id": tenant_id})
            stored = schema.model_copy(update={"version": int(rows[0]["version"]) + 1})
            try:
                self._run(
                    "schemas.put",
                    {
                        "tenant_id": tenant_id,
                        "version": stored.version,
                        "body_json": stored.model_dump_json(),
                        "updated_at": to_neo(utcnow()),
                    },
                )
            except ConflictError:
                if attempt == SCHEMA_PUT_ATTEMPTS:
                    raise
                continue
            return stored
        raise AssertionError("unreachable")

    # -- administration --------------------------------------------------------------------
    # -- export and restore (graph.stores.transfer; the queries in graph.stores.neo4j.transfer) --
    def export_snapshot(self) -> AbstractContextManager[None]:
        """None: Neo4j reads are read-committed and an export's pages are transactions of
        their own, so a tenant exported while it is written is not one state of it
        (docs/import-export.md: stop writes to it first)."""
        return contextlib.nullcontext()

    def export_records(self, *, tenant_id: str, kind: RecordType) -> Iterator[Record]:
        return transfer.export_records(self.conn, tenant_id=tenant_id, kind=kind)

    def restore_records(self, *, tenant_id: str, records: Sequence[Record]) -> None:
        restore_records(self, tenant_id=tenant_id, records=records)

    def purge_tenant(self, *, tenant_id: str) -> None:
        """Delete everything of one tenant, in bounded batches."""
        # Its review lists first: they cite episodes.
        self.queue.purge_queue_data(tenant_id=tenant_id)
        for name in ("tenant.purge_facts", "tenant.purge"):
            while True:
                rows = self._run(name, {"tenant_id": tenant_id, "batch": PURGE_BATCH})
                if not rows or int(rows[0]["deleted"]) == 0:
                    break


__all__ = ["TEMPLATES", "Neo4jLedgerTx", "Neo4jStore"]
