"""SQLite rows ↔ the domain's records: every column list, decoder and encoder of the store.

Times are stored as fixed-width UTC text (:func:`graph.timeutil.to_db`), so they compare
and sort as text; lists and maps are JSON columns.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from graph.model import (
    Cardinality,
    Entity,
    Episode,
    EpisodeKind,
    EpisodeStatus,
    Fact,
    MemoryDelta,
    ValueType,
)
from graph.queue import (
    CandidateStatus,
    HoldReason,
    MergeCandidate,
    MergeStatus,
    PendingCandidate,
)
from graph.stores.codec import assertion_from_parts, assertion_payload, load_value
from graph.temporal import Assertion
from graph.timeutil import from_db, to_db

FACT_COLUMNS = (
    "version_id, tenant_id, fact_id, timeline_key, subject, subject_type, predicate, "
    "value_json, value_type, object, object_type, valid_from, valid_to, recorded_at, "
    "retired_at, source_episode_id, sources_json, supersedes_json, confidence, memory_type, "
    "schema_version, retention_policy, cardinality"
)
FACT_COLUMN_COUNT = 23


def opt_text(value: datetime | None) -> str | None:
    return None if value is None else to_db(value)


def opt_dt(text: str | None) -> datetime | None:
    return None if text is None else from_db(text)


def in_list(values: Sequence[Any]) -> str:
    """Placeholders for an IN list; the values themselves go in as parameters."""
    return ",".join("?" for _ in values)


# -- facts ---------------------------------------------------------------------------------
def id_list(text: str) -> list[str]:
    """A JSON list of ids as this store writes it. Nearly every row holds ``[]`` or one
    id (``["ep-1"]``): those are read without the JSON parser, the rest with it."""
    if text == "[]":
        return []
    if (
        len(text) >= 4
        and text.startswith('["')
        and text.endswith('"]')
        and '"' not in text[2:-2]
        and "\\" not in text
    ):
        return [text[2:-2]]
    return list(json.loads(text))


def fact_from_row(r: sqlite3.Row | tuple[Any, ...]) -> Fact:
    """A version this store wrote, from a row of ``SELECT FACT_COLUMNS`` (read by
    position: a name lookup in sqlite3.Row scans the columns, and a search decodes
    hundreds of facts); every column decoded to its type here."""
    (
        version_id, tenant_id, fact_id, _key, subject, subject_type, predicate, value_json,
        value_type, obj, object_type, valid_from, valid_to, recorded_at, retired_at,
        source_episode_id, sources_json, supersedes_json, confidence, memory_type,
        schema_version, retention_policy, cardinality,
    ) = r  # fmt: skip
    return Fact.trusted(
        tenant_id=tenant_id,
        fact_id=fact_id,
        version_id=version_id,
        subject=subject,
        subject_type=subject_type,
        predicate=predicate,
        value=load_value(value_json),
        value_type=ValueType(value_type),
        object=obj,
        object_type=object_type,
        valid_from=from_db(valid_from),
        valid_to=opt_dt(valid_to),
        recorded_at=from_db(recorded_at),
        retired_at=opt_dt(retired_at),
        source_episode_id=source_episode_id,
        sources=id_list(sources_json),
        supersedes=id_list(supersedes_json),
        confidence=confidence,
        memory_type=memory_type,
        schema_version=schema_version,
        retention_policy=retention_policy,
        cardinality=Cardinality(cardinality),
    )


def fact_rows(
    facts: Sequence[Fact], *, tenant_id: str, keys: Sequence[str]
) -> list[tuple[Any, ...]]:
    """Rows of ``INSERT INTO facts (FACT_COLUMNS)``, in that order. A batch's versions
    share their recorded time and many of their bounds, so each distinct instant is
    formatted once; ``json.dumps`` with its defaults builds no encoder per call."""
    times: dict[datetime, str] = {}

    def t(value: datetime) -> str:
        text = times.get(value)
        if text is None:
            text = times[value] = to_db(value)
        return text

    dumps = json.dumps
    rows: list[tuple[Any, ...]] = []
    for f, key in zip(facts, keys, strict=True):
        rows.append(
            (
                f.version_id,
                tenant_id,
                f.fact_id,
                key,
                f.subject,
                f.subject_type,
                f.predicate,
                None if f.value is None else dumps(f.value),
                f.value_type.value,
                f.object,
                f.object_type,
                t(f.valid_from),
                None if f.valid_to is None else t(f.valid_to),
                t(f.recorded_at),
                None if f.retired_at is None else t(f.retired_at),
                f.source_episode_id,
                dumps(f.sources),
                dumps(f.supersedes) if f.supersedes else "[]",
                f.confidence,
                f.memory_type,
                f.schema_version,
                f.retention_policy,
                f.cardinality.value,
            )
        )
    return rows


# -- entities and episodes -----------------------------------------------------------------
def entity_from_row(r: sqlite3.Row) -> Entity:
    return Entity(
        tenant_id=r["tenant_id"],
        entity_id=r["entity_id"],
        entity_type=r["entity_type"],
        name=r["name"],
        aliases=json.loads(r["aliases_json"]),
        summary=r["summary"],
        created_at=from_db(r["created_at"]),
    )


def entity_unchecked(r: sqlite3.Row) -> Entity:
    """An entity row this store wrote, built without re-validation (several times cheaper
    at thousands of entities, e.g. the catalog read for every extracted episode)."""
    return Entity.model_construct(
        tenant_id=r["tenant_id"],
        entity_id=r["entity_id"],
        entity_type=r["entity_type"],
        name=r["name"],
        aliases=json.loads(r["aliases_json"]),
        summary=r["summary"],
        created_at=from_db(r["created_at"]),
    )


def entity_values(e: Entity, *, tenant_id: str) -> tuple[Any, ...]:
    """(tenant_id, entity_id, entity_type, name, aliases_json, summary, created_at)."""
    return (
        tenant_id,
        e.entity_id,
        e.entity_type,
        e.name,
        json.dumps(e.aliases),
        e.summary,
        to_db(e.created_at),
    )


def episode_from_row(r: sqlite3.Row) -> Episode:
    return Episode(
        tenant_id=r["tenant_id"],
        episode_id=r["episode_id"],
        kind=EpisodeKind(r["kind"]),
        source=r["source"],
        content=json.loads(r["content_json"]),
        content_hash=r["content_hash"],
        occurred_at=from_db(r["occurred_at"]),
        session_id=r["session_id"],
        metadata=json.loads(r["metadata_json"]),
        recorded_at=from_db(r["recorded_at"]),
        status=EpisodeStatus(r["status"]),
        attempts=r["attempts"],
        last_error=r["last_error"],
        rejected=json.loads(r["rejected_json"]),
        usage=json.loads(r["usage_json"]) if r["usage_json"] else None,
        # Null: stored before it was recorded (every episode read selects *).
        needs_model=None if r["needs_model"] is None else bool(r["needs_model"]),
    )


def episode_values(episode: Episode, content_hash: str) -> tuple[Any, ...]:
    """(tenant_id, episode_id, kind, source, content_json, content_hash, occurred_at,
    session_id, metadata_json, recorded_at, status, attempts, last_error, rejected_json,
    next_attempt_at): a new episode is due for extraction at once."""
    return (
        episode.tenant_id,
        episode.episode_id,
        episode.kind.value,
        episode.source,
        json.dumps(episode.content),
        content_hash,
        to_db(episode.occurred_at),
        episode.session_id,
        json.dumps(episode.metadata),
        to_db(episode.recorded_at),
        episode.status.value,
        episode.attempts,
        episode.last_error,
        json.dumps(episode.rejected),
        to_db(episode.recorded_at),
    )


# -- assertions ----------------------------------------------------------------------------
def assertion_from_row(r: sqlite3.Row) -> Assertion:
    return assertion_from_parts(
        seq=r["seq"],
        kind=r["kind"],
        fact_id=r["fact_id"],
        recorded_at=from_db(r["recorded_at"]),
        valid_from=opt_dt(r["valid_from"]),
        valid_to=opt_dt(r["valid_to"]),
        source_episode_id=r["source_episode_id"],
        payload=r["payload"],
    )


def assertion_values(a: Assertion, *, tenant_id: str, key: str) -> tuple[Any, ...]:
    """(tenant_id, timeline_key, seq, kind, fact_id, recorded_at, valid_from, valid_to,
    source_episode_id, payload)."""
    return (
        tenant_id,
        key,
        a.seq,
        a.kind,
        a.fact_id,
        to_db(a.recorded_at),
        opt_text(a.valid_from),
        opt_text(a.valid_to),
        a.source_episode_id,
        assertion_payload(a),
    )


def assertion_rows(
    rows: Sequence[tuple[str, Assertion]], *, tenant_id: str
) -> list[tuple[Any, ...]]:
    """:func:`assertion_values` of a batch, each distinct instant formatted once (a batch's
    entries share their recorded time)."""
    times: dict[datetime | None, str | None] = {None: None}

    def t(value: datetime | None) -> str | None:
        if value in times:
            return times[value]
        text = times[value] = to_db(value)  # type: ignore[arg-type]  # None is in times
        return text

    return [
        (
            tenant_id,
            key,
            a.seq,
            a.kind,
            a.fact_id,
            t(a.recorded_at),
            t(a.valid_from),
            t(a.valid_to),
            a.source_episode_id,
            assertion_payload(a),
        )
        for key, a in rows
    ]


# -- the queue's review lists --------------------------------------------------------------
def candidate_from_row(r: sqlite3.Row) -> PendingCandidate:
    return PendingCandidate(
        tenant_id=r["tenant_id"],
        candidate_id=r["candidate_id"],
        episode_id=r["episode_id"],
        statement_key=r["statement_key"],
        reason=HoldReason(r["reason"]),
        delta=MemoryDelta.model_validate_json(r["delta_json"]),
        status=CandidateStatus(r["status"]),
        created_at=from_db(r["created_at"]),
        decided_at=opt_dt(r["decided_at"]),
        note=r["note"],
    )


def candidate_values(k: PendingCandidate) -> tuple[Any, ...]:
    """(tenant_id, candidate_id, episode_id, statement_key, reason, delta_json, status,
    created_at)."""
    return (
        k.tenant_id,
        k.candidate_id,
        k.episode_id,
        k.statement_key,
        k.reason.value,
        k.delta.model_dump_json(),
        k.status.value,
        to_db(k.created_at),
    )


def merge_from_row(r: sqlite3.Row) -> MergeCandidate:
    return MergeCandidate(
        tenant_id=r["tenant_id"],
        candidate_id=r["candidate_id"],
        entity_id=r["entity_id"],
        name=r["name"],
        existing_entity_id=r["existing_entity_id"],
        entity_type=r["entity_type"],
        similarity=r["similarity"],
        episode_id=r["episode_id"],
        status=MergeStatus(r["status"]),
        created_at=from_db(r["created_at"]),
        decided_at=opt_dt(r["decided_at"]),
    )


def merge_values(m: MergeCandidate) -> tuple[Any, ...]:
    """(tenant_id, candidate_id, entity_id, name, existing_entity_id, entity_type,
    similarity, episode_id, status, created_at)."""
    return (
        m.tenant_id,
        m.candidate_id,
        m.entity_id,
        m.name,
        m.existing_entity_id,
        m.entity_type,
        m.similarity,
        m.episode_id,
        m.status.value,
        to_db(m.created_at),
    )


__all__ = [
    "FACT_COLUMNS",
    "FACT_COLUMN_COUNT",
    "assertion_from_row",
    "assertion_rows",
    "assertion_values",
    "candidate_from_row",
    "candidate_values",
    "entity_from_row",
    "entity_unchecked",
    "entity_values",
    "episode_from_row",
    "episode_values",
    "fact_from_row",
    "fact_rows",
    "id_list",
    "in_list",
    "merge_from_row",
    "merge_values",
    "opt_dt",
    "opt_text",
]
