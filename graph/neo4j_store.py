"""The production store: the storage port over Neo4j, every query a template in ``cypher/``.

Model (docs/graph-model.md): entities and episodes are nodes; every version of a fact is
a ``FACT`` relationship from the subject entity to the object entity or to a shared
``Value`` node, carrying valid time, system time and provenance as native properties.
The database enforces the ledger's invariant: ``open_key`` exists only on a version that
is current and open, under a relationship uniqueness constraint.

This is the only module that imports ``neo4j``. Driver errors become the project's own in
one place (:func:`_translated`); :meth:`Neo4jStore._run` makes every query call.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import neo4j
from neo4j import Driver, GraphDatabase, RoutingControl, Transaction
from neo4j.exceptions import (
    AuthError,
    ConstraintError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from neo4j.time import DateTime as NeoDateTime

from graph.codec import (
    assertion_from_parts,
    assertion_payload,
    dump_value,
    episode_hash,
    load_value,
)
from graph.errors import (
    ConflictError,
    StoreUnavailableError,
    TemplateError,
    TransientStoreError,
    invalid,
)
from graph.model import (
    TYPE_RE,
    Cardinality,
    Direction,
    Entity,
    Episode,
    EpisodeKind,
    EpisodeStatus,
    Fact,
    FactQuery,
    Neighborhood,
    ValueType,
    canonical_value,
)
from graph.neo4j_queue import Neo4jQueueMixin
from graph.neo4j_search import Neo4jSearchMixin
from graph.schema import MemorySchema, schema_from_json
from graph.templates import Template, load_templates, require
from graph.temporal import Assertion
from graph.timeutil import to_db, utcnow
from graph.traversal import breadth_first

DEFAULT_DATABASE = "neo4j"
DEFAULT_EMBEDDING_DIM = 384
PURGE_BATCH = 5000
SCHEMA_PUT_ATTEMPTS = 5
MANAGED_RETRY_SECONDS = 5.0
_type_re = re.compile(TYPE_RE)

Row = dict[str, Any]

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
    "ledger.append_assertions",
    "ledger.assertions",
    "ledger.current_fact",
    "ledger.current_versions",
    "ledger.delete_episode_data",
    "ledger.doomed_endpoints",
    "ledger.episode_timelines",
    "ledger.episodes_occurred_at",
    "ledger.insert_relation_versions",
    "ledger.insert_value_versions",
    "ledger.lock_entities",
    "ledger.lock_episodes",
    "ledger.lock_values",
    "ledger.lock_timelines",
    "ledger.mention",
    "ledger.retire_versions",
    "ledger.upsert_entities",
    "schema.setup",
    "schemas.get",
    "schemas.latest_version",
    "schemas.put",
    "store.ping",
    "tenant.purge",
    "tenant.purge_facts",
}


# -- errors ------------------------------------------------------------------------------
@contextmanager
def _translated() -> Iterator[None]:
    """Driver errors → the project's errors, always chained (``raise ... from e``)."""
    try:
        yield
    except (ServiceUnavailable, SessionExpired, AuthError) as e:
        raise StoreUnavailableError(f"Neo4j is unavailable: {e}") from e
    except TransientError as e:
        # Deadlocks, lock timeouts, leader switches: the service runs the transaction again.
        raise TransientStoreError(f"Neo4j transient error: {e}") from e
    except ConstraintError as e:
        raise ConflictError(f"constraint violated: {e}") from e


# -- values ------------------------------------------------------------------------------
NO_LIMIT = 2**62  # LIMIT takes no null: "no limit" is a number no read reaches


def to_neo(value: datetime | None) -> datetime | None:
    """Always UTC on the way in: Cypher orders datetimes by instant, but ``=`` also
    compares the zone, so one zone everywhere keeps equality exact."""
    return None if value is None else value.astimezone(UTC)


def from_neo(value: Any) -> datetime | None:
    """Back to an aware UTC datetime, from a DATETIME or from its text (the templates
    return ``toString(t)``, which the driver unpacks far faster). We only ever store
    microseconds, so nothing is lost either way."""
    if value is None:
        return None
    if isinstance(value, str):
        return datetime.fromisoformat(value).astimezone(UTC)
    if isinstance(value, NeoDateTime):
        return value.to_native().astimezone(UTC)
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    raise TypeError(f"expected a datetime, got {type(value).__name__}")


def text(value: datetime | None) -> str | None:
    """A time as fixed-width UTC text for batched rows; the template applies datetime().
    Packing thousands of DATETIME values in the Python driver costs more than the write."""
    return None if value is None else to_db(value)


def _at(value: Any) -> datetime:
    out = from_neo(value)
    assert out is not None
    return out


def open_key(tenant_id: str, timeline_key: str) -> str:
    return f"{tenant_id}|{timeline_key}"


def value_key(fact: Fact) -> str:
    """The shared Value node of a literal: one per type and canonical value (1 == 1.0)."""
    return f"{fact.value_type.value}|{canonical_value(fact.value)}"


def fact_row(fact: Fact, *, tenant_id: str, key: str) -> Row:
    """One row of the insert templates: every property of the version, times as text."""
    return {
        "version_id": fact.version_id,
        "fact_id": fact.fact_id,
        "timeline_key": key,
        "subject_id": fact.subject,
        "subject_type": fact.subject_type,
        "predicate": fact.predicate,
        "value_json": dump_value(fact.value),
        "value_type": fact.value_type.value,
        "object_id": fact.object,
        "object_type": fact.object_type,
        "valid_from": text(fact.valid_from),
        "valid_to": text(fact.valid_to),
        "recorded_at": text(fact.recorded_at),
        "retired_at": text(fact.retired_at),
        "source_episode_id": fact.source_episode_id,
        "sources": list(fact.sources),
        "supersedes": list(fact.supersedes),
        "confidence": fact.confidence,
        "memory_type": fact.memory_type,
        "schema_version": fact.schema_version,
        "retention_policy": fact.retention_policy,
        "cardinality": fact.cardinality.value,
        "fact_text": fact.sentence(),
        # The one-open-row constraint's key: only on a current, open version.
        "open_key": (
            open_key(tenant_id, key) if fact.retired_at is None and fact.valid_to is None else None
        ),
    }


def fact_from_props(p: Mapping[str, Any]) -> Fact:
    return Fact(
        tenant_id=p["tenant_id"],
        fact_id=p["fact_id"],
        version_id=p["version_id"],
        subject=p["subject"],
        subject_type=p["subject_type"],
        predicate=p["predicate"],
        value=load_value(p.get("value_json")),
        value_type=ValueType(p["value_type"]),
        object=p.get("object"),
        object_type=p.get("object_type"),
        valid_from=_at(p["valid_from"]),
        valid_to=from_neo(p.get("valid_to")),
        recorded_at=_at(p["recorded_at"]),
        retired_at=from_neo(p.get("retired_at")),
        source_episode_id=p.get("source_episode_id"),
        sources=list(p.get("sources") or []),
        supersedes=list(p.get("supersedes") or []),
        confidence=float(p["confidence"]),
        memory_type=p["memory_type"],
        schema_version=int(p["schema_version"]),
        retention_policy=p["retention_policy"],
        cardinality=Cardinality(p["cardinality"]),
    )


def entity_from_props(tenant_id: str, p: Mapping[str, Any]) -> Entity:
    return Entity(
        tenant_id=tenant_id,
        entity_id=p["entity_id"],
        entity_type=p["entity_type"],
        name=p["name"],
        aliases=list(p.get("aliases") or []),
        summary=p.get("summary"),
        created_at=_at(p["created_at"]),
    )


def episode_props(episode: Episode, content_hash: str) -> Row:
    props: Row = {
        "tenant_id": episode.tenant_id,
        "episode_id": episode.episode_id,
        "kind": episode.kind.value,
        "source": episode.source,
        "content_json": json.dumps(episode.content),
        "content_text": episode.text(),  # what the fulltext index reads
        "content_hash": content_hash,
        "occurred_at": to_neo(episode.occurred_at),
        "session_id": episode.session_id,
        "metadata_json": json.dumps(episode.metadata),
        "recorded_at": to_neo(episode.recorded_at),
        "status": episode.status.value,
        "attempts": episode.attempts,
        "last_error": episode.last_error,
        "rejected_json": json.dumps(episode.rejected),
        # The extraction queue's fields (a later issue leases episodes); due at once.
        "next_attempt_at": to_neo(episode.recorded_at),
    }
    return {k: v for k, v in props.items() if v is not None}


def episode_from_props(p: Mapping[str, Any]) -> Episode:
    return Episode(
        tenant_id=p["tenant_id"],
        episode_id=p["episode_id"],
        kind=EpisodeKind(p["kind"]),
        source=p.get("source"),
        content=json.loads(p["content_json"]),
        content_hash=p["content_hash"],
        occurred_at=_at(p["occurred_at"]),
        session_id=p.get("session_id"),
        metadata=json.loads(p["metadata_json"]),
        recorded_at=_at(p["recorded_at"]),
        status=EpisodeStatus(p["status"]),
        attempts=int(p["attempts"]),
        last_error=p.get("last_error"),
        rejected=json.loads(p["rejected_json"]),
    )


def assertion_row(key: str, a: Assertion) -> Row:
    return {
        "timeline_key": key,
        "seq": a.seq,
        "kind": a.kind,
        "fact_id": a.fact_id,
        "recorded_at": text(a.recorded_at),
        "valid_from": text(a.valid_from),
        "valid_to": text(a.valid_to),
        "source_episode_id": a.source_episode_id,
        "payload": assertion_payload(a),
    }


def assertion_from_props(p: Mapping[str, Any]) -> Assertion:
    return assertion_from_parts(
        seq=int(p["seq"]),
        kind=p["kind"],
        fact_id=p["fact_id"],
        recorded_at=_at(p["recorded_at"]),
        valid_from=from_neo(p.get("valid_from")),
        valid_to=from_neo(p.get("valid_to")),
        source_episode_id=p.get("source_episode_id"),
        payload=p["payload"],
    )


# -- the ledger primitives ----------------------------------------------------------------
class Neo4jLedgerTx:
    """The ledger primitives over one explicit (write) driver transaction."""

    def __init__(self, store: Neo4jStore, tx: Transaction) -> None:
        self._store = store
        self._tx = tx
        self._locked: set[str] = set()  # entities this transaction holds the lock of

    def _run(self, name: str, **params: Any) -> list[Row]:
        return self._store._run(name, params, tx=self._tx)

    def lock_timelines(self, *, tenant_id: str, keys: Sequence[str]) -> None:
        if keys:
            self._run("ledger.lock_timelines", tenant_id=tenant_id, keys=sorted(keys))

    def episodes_occurred_at(self, *, tenant_id: str, episode_ids: set[str]) -> dict[str, datetime]:
        if not episode_ids:
            return {}
        rows = self._run(
            "ledger.episodes_occurred_at", tenant_id=tenant_id, episode_ids=sorted(episode_ids)
        )
        return {r["episode_id"]: _at(r["occurred_at"]) for r in rows}

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
        rows = [
            {
                "entity_id": e.entity_id,
                "entity_type": e.entity_type,
                "name": e.name,
                "aliases": list(e.aliases),
                "summary": e.summary,
                "created_at": text(e.created_at),
            }
            for e in sorted(entities, key=lambda e: e.entity_id)  # the global lock order
        ]
        self._run("ledger.upsert_entities", tenant_id=tenant_id, rows=rows)
        self._locked.update(e.entity_id for e in entities)

    def current_versions(self, *, tenant_id: str, keys: Sequence[str]) -> dict[str, list[Fact]]:
        out: dict[str, list[Fact]] = {k: [] for k in keys}
        if keys:
            for r in self._run("ledger.current_versions", tenant_id=tenant_id, keys=list(keys)):
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
            batch = [assertion_row(key, a) for key, a in rows]
            self._run("ledger.append_assertions", tenant_id=tenant_id, rows=batch)

    def retire(self, *, tenant_id: str, version_ids: Sequence[str], at: datetime) -> None:
        if version_ids:
            self._run(
                "ledger.retire_versions",
                tenant_id=tenant_id,
                version_ids=list(version_ids),
                at=to_neo(at),
            )

    def insert(self, *, tenant_id: str, facts: Sequence[Fact], keys: Sequence[str]) -> None:
        relations: list[Row] = []
        literals: list[Row] = []
        for f, key in zip(facts, keys, strict=True):
            row = fact_row(f, tenant_id=tenant_id, key=key)
            if f.object is not None:
                relations.append(row)
            else:
                literals.append({**row, "value_key": value_key(f)})
        if not relations and not literals:
            return
        ends = {f.subject for f in facts} | {f.object for f in facts if f.object is not None}
        values = {
            value_key(f): {
                "value_key": value_key(f),
                "value": f.value,
                "value_type": f.value_type.value,
            }
            for f in facts
            if f.object is None
        }
        self._lock_nodes(
            tenant_id=tenant_id, entity_ids=ends - self._locked, values=list(values.values())
        )
        if relations:
            self._run("ledger.insert_relation_versions", tenant_id=tenant_id, rows=relations)
        if literals:
            self._run("ledger.insert_value_versions", tenant_id=tenant_id, rows=literals)

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
            self._lock_nodes(tenant_id=tenant_id, episode_ids={ep for ep, _ in pairs})
            rows = [{"episode_id": ep, "entity_id": ent} for ep, ent in pairs]
            self._run("ledger.mention", tenant_id=tenant_id, pairs=rows)

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


# -- the store ----------------------------------------------------------------------------
def _strip_credentials(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


class Neo4jStore(Neo4jQueueMixin, Neo4jSearchMixin):
    """The storage port over one Neo4j database (the extraction queue and the read path's
    search live in their own modules, as for SQLite)."""

    def __init__(
        self,
        driver: Driver,
        *,
        url: str,
        database: str = DEFAULT_DATABASE,
        embedding_dim: int = DEFAULT_EMBEDDING_DIM,
    ) -> None:
        self.url = url
        self._driver = driver
        self._database = database
        self._embedding_dim = embedding_dim
        self._templates: dict[str, Template] | None = None

    @classmethod
    def from_url(cls, url: str) -> Neo4jStore:
        """Connect as SGAM_NEO4J_USER / SGAM_NEO4J_PASSWORD (no auth when the user is unset)
        to SGAM_NEO4J_DATABASE (default ``neo4j``)."""
        user = os.environ.get("SGAM_NEO4J_USER")
        auth = (user, os.environ.get("SGAM_NEO4J_PASSWORD", "")) if user else None
        database = os.environ.get("SGAM_NEO4J_DATABASE") or DEFAULT_DATABASE
        dim_text = os.environ.get("SGAM_EMBEDDING_DIM") or str(DEFAULT_EMBEDDING_DIM)
        if not dim_text.isdigit() or not 1 <= int(dim_text) <= 4096:
            raise invalid(
                f"SGAM_EMBEDDING_DIM must be 1..4096, not {dim_text!r}", field="embedding_dim"
            )
        with _translated():
            # No server notifications: the templates read properties that are absent while
            # null (e.g. summary), which would log a warning on every call.
            driver = GraphDatabase.driver(
                url,
                auth=auth,
                notifications_min_severity="OFF",
                # Managed calls retry transient errors and lost connections this long; the
                # default 30 s would hold an API request that long before it answers 503.
                max_transaction_retry_time=MANAGED_RETRY_SECONDS,
            )
        return cls(
            driver, url=_strip_credentials(url), database=database, embedding_dim=int(dim_text)
        )

    # -- templates and the one place that runs queries -------------------------------------
    @property
    def templates(self) -> dict[str, Template]:
        if self._templates is None:
            self._templates = load_templates()
        return self._templates

    def _template(self, name: str, params: Mapping[str, Any]) -> Template:
        t = self.templates.get(name)
        if t is None:
            raise TemplateError(f"no Cypher template named {name!r}")
        if set(params) != t.params:
            raise TemplateError(
                f"{name} takes parameters {sorted(t.params)}, was given {sorted(params)}"
            )
        return t

    def _run(
        self, name: str, params: Mapping[str, Any], *, tx: Transaction | None = None
    ) -> list[Row]:
        """Run one template: inside ``tx`` when given, else as its own managed transaction
        (routed READ or WRITE by the template's mode; the driver retries transient errors)."""
        t = self._template(name, params)
        rows: list[Row] = []
        with _translated():
            for statement, names in zip(t.statements, t.statement_params, strict=True):
                used = {k: params[k] for k in names}
                if tx is not None:
                    rows = tx.run(statement, used).data()
                else:
                    records, _, _ = self._driver.execute_query(
                        statement,
                        used,
                        database_=self._database,
                        routing_=RoutingControl.READ if t.mode == "read" else RoutingControl.WRITE,
                    )
                    rows = [r.data() for r in records]
        return rows

    # -- lifecycle -------------------------------------------------------------------------
    def init(self) -> None:
        """Load and check every template, then create constraints and indexes (idempotent)."""
        templates = load_templates()
        require(templates, TEMPLATES)
        self._templates = templates
        self._run("schema.setup", {"embedding_dim": self._embedding_dim})

    def close(self) -> None:
        self._driver.close()

    def ping(self) -> None:
        self._run("store.ping", {})

    @contextmanager
    def transaction(self) -> Iterator[Neo4jLedgerTx]:
        """One explicit write transaction: commit on success, roll back on any exception."""
        with _translated():
            session = self._driver.session(
                database=self._database,
                default_access_mode=neo4j.WRITE_ACCESS,
                # Share causal bookmarks with execute_query, so reads see our writes.
                bookmark_manager=self._driver.execute_query_bookmark_manager,
            )
        try:
            with _translated():
                tx = session.begin_transaction()
            try:
                yield Neo4jLedgerTx(self, tx)
            except BaseException:
                _rollback_quietly(tx)
                raise
            with _translated():
                tx.commit()
        finally:
            session.close()

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
        params = {k: v for k, v in every.items() if k in self.templates[name].params}
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
        """Breadth first (graph.traversal), one ``graph.hop`` template call per level."""

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
    def purge_tenant(self, *, tenant_id: str) -> None:
        """Delete everything of one tenant, in bounded batches."""
        self.purge_queue_data(tenant_id=tenant_id)  # its review lists first: they cite episodes
        for name in ("tenant.purge_facts", "tenant.purge"):
            while True:
                rows = self._run(name, {"tenant_id": tenant_id, "batch": PURGE_BATCH})
                if not rows or int(rows[0]["deleted"]) == 0:
                    break


def _rollback_quietly(tx: Transaction) -> None:
    """Roll back after a failure; a broken connection must not hide the original error."""
    try:
        if not tx.closed():
            tx.rollback()
    except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError):
        pass


__all__ = ["Neo4jLedgerTx", "Neo4jStore", "from_neo", "to_neo"]
