"""Neo4j properties ↔ the domain's records: every encoder and decoder of the store.

Times go in as UTC datetimes (single values) or fixed-width UTC text (batched rows, which
the templates turn into datetimes); they come back as DATETIME values or as the text of
``toString(t)`` (cypher/_fact_projection.cypher), and :func:`from_neo` reads both.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from neo4j.time import DateTime as NeoDateTime

from graph.model import (
    Cardinality,
    Entity,
    Episode,
    EpisodeKind,
    EpisodeStatus,
    Fact,
    MemoryDelta,
    ValueType,
    canonical_value,
)
from graph.queue import (
    CandidateStatus,
    HoldReason,
    MergeCandidate,
    MergeStatus,
    PendingCandidate,
)
from graph.retrieval.text import index_terms
from graph.stores.codec import assertion_from_parts, assertion_payload, dump_value, load_value
from graph.temporal import Assertion

Row = dict[str, Any]


def scope_token(tenant_id: str, *, current: bool = False) -> str:
    """The fulltext prefix of one tenant: one token of letters, digits and underscores,
    one-to-one ("_" -> "_u", "-" -> "_h"); ``c`` instead of ``t`` for the terms of a fact
    version open in system time."""
    return ("c" if current else "t") + tenant_id.replace("_", "_u").replace("-", "_h")


def fact_terms(tenant_id: str, sentence: str, *, open_version: bool) -> tuple[str, str | None]:
    """A fact version's fulltext fields: ``terms`` (its words under the tenant's token,
    :func:`graph.retrieval.text.index_terms`) and, on the version open in system time,
    ``terms_current`` (the same words under the "current" token; search of the present
    reads only those). Each tenant's words being its own terms, Lucene's document
    frequencies are the tenant's and a query needs no tenant clause, which let Lucene skip
    the postings of common words."""
    held = index_terms(scope_token(tenant_id), sentence)
    if not open_version:
        return held, None
    # Every term starts with the scope token's "t"; the current token differs in it only.
    return held, " ".join("c" + t[1:] for t in held.split())


# -- values ------------------------------------------------------------------------------
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
        return _parsed(value)
    if isinstance(value, NeoDateTime):
        return value.to_native().astimezone(UTC)
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    raise TypeError(f"expected a datetime, got {type(value).__name__}")


@lru_cache(maxsize=8192)
def _parsed(value: str) -> datetime:
    """A time's text read once: the versions of a search share most of their times (one
    batch writes one recorded_at), and datetimes are immutable."""
    return datetime.fromisoformat(value).astimezone(UTC)


# Enum members by value: a dict lookup, several times cheaper than calling the enum, for
# the few hundred versions a search decodes.
_VALUE_TYPES = {t.value: t for t in ValueType}
_CARDINALITIES = {c.value: c for c in Cardinality}


def text(value: datetime | None) -> str | None:
    """A time as UTC ISO 8601 text for batched rows; the template applies datetime().
    Packing thousands of DATETIME values in the Python driver costs more than the write,
    and ``isoformat`` (C) about a tenth of formatting fixed-width text field by field (the
    SQLite store needs that for its string order; Cypher parses either into the same
    instant, in the same zone: ``+00:00`` is ``Z``)."""
    return None if value is None else value.astimezone(UTC).isoformat()


def at_utc(value: Any) -> datetime:
    """:func:`from_neo` of a time that is never null."""
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
    sentence = fact.sentence()
    terms, terms_current = fact_terms(tenant_id, sentence, open_version=fact.retired_at is None)
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
        "fact_text": sentence,
        "terms": terms,  # what the fulltext index reads (fact_terms)
        "terms_current": terms_current,
        # The one-open-row constraint's key: only on a current, open version.
        "open_key": (
            open_key(tenant_id, key) if fact.retired_at is None and fact.valid_to is None else None
        ),
    }


def fact_from_props(p: Mapping[str, Any]) -> Fact:
    """A version this store wrote, every property cast to its field's type here: built
    without pydantic's validation (``Fact.trusted``), which was about half the cost of a
    search's few hundred versions."""
    return Fact.trusted(
        tenant_id=p["tenant_id"],
        fact_id=p["fact_id"],
        version_id=p["version_id"],
        subject=p["subject"],
        subject_type=p["subject_type"],
        predicate=p["predicate"],
        value=load_value(p.get("value_json")),
        value_type=_VALUE_TYPES.get(p["value_type"]) or ValueType(p["value_type"]),
        object=p.get("object"),
        object_type=p.get("object_type"),
        valid_from=at_utc(p["valid_from"]),
        valid_to=from_neo(p.get("valid_to")),
        recorded_at=at_utc(p["recorded_at"]),
        retired_at=from_neo(p.get("retired_at")),
        source_episode_id=p.get("source_episode_id"),
        sources=list(p.get("sources") or []),
        supersedes=list(p.get("supersedes") or []),
        confidence=float(p["confidence"]),
        memory_type=str(p["memory_type"]),
        schema_version=int(p["schema_version"]),
        retention_policy=str(p["retention_policy"]),
        cardinality=_CARDINALITIES.get(p["cardinality"]) or Cardinality(p["cardinality"]),
    )


def entity_terms(tenant_id: str, name: str, aliases: list[str]) -> str:
    """The fulltext terms of an entity: its name's and its aliases'."""
    return index_terms(scope_token(tenant_id), " ".join([name, *aliases]))


def entity_from_props(tenant_id: str, p: Mapping[str, Any]) -> Entity:
    return Entity(
        tenant_id=tenant_id,
        entity_id=p["entity_id"],
        entity_type=p["entity_type"],
        name=p["name"],
        aliases=list(p.get("aliases") or []),
        summary=p.get("summary"),
        created_at=at_utc(p["created_at"]),
    )


def episode_props(episode: Episode, content_hash: str) -> Row:
    text = episode.text()
    props: Row = {
        "tenant_id": episode.tenant_id,
        "episode_id": episode.episode_id,
        "kind": episode.kind.value,
        "source": episode.source,
        "content_json": json.dumps(episode.content),
        "content_text": text,  # what the model embeds
        "terms": index_terms(scope_token(episode.tenant_id), text),  # what fulltext reads
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
        "needs_model": episode.needs_model,  # which workers may claim it (queue.claim)
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
        occurred_at=at_utc(p["occurred_at"]),
        session_id=p.get("session_id"),
        metadata=json.loads(p["metadata_json"]),
        recorded_at=at_utc(p["recorded_at"]),
        status=EpisodeStatus(p["status"]),
        attempts=int(p["attempts"]),
        last_error=p.get("last_error"),
        rejected=json.loads(p["rejected_json"]),
        usage=json.loads(p["usage_json"]) if p.get("usage_json") else None,
        needs_model=p.get("needs_model"),  # in the ledger export's reads (e {.*})
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
        recorded_at=at_utc(p["recorded_at"]),
        valid_from=from_neo(p.get("valid_from")),
        valid_to=from_neo(p.get("valid_to")),
        source_episode_id=p.get("source_episode_id"),
        payload=p["payload"],
    )


def utc(value: datetime) -> datetime:
    """:func:`to_neo` of a time that is never null."""
    out = to_neo(value)
    assert out is not None
    return out


# -- the queue's review lists --------------------------------------------------------------
def candidate_props(k: PendingCandidate) -> Row:
    """The properties of a held candidate that are not its identity (tenant, episode,
    statement), which the hold template matches on."""
    return {
        "candidate_id": k.candidate_id,
        "reason": k.reason.value,
        "delta_json": k.delta.model_dump_json(),
        "status": k.status.value,
        "created_at": to_neo(k.created_at),
    }


def candidate_from_props(p: Mapping[str, Any]) -> PendingCandidate:
    return PendingCandidate(
        tenant_id=p["tenant_id"],
        candidate_id=p["candidate_id"],
        episode_id=p["episode_id"],
        statement_key=p["statement_key"],
        reason=HoldReason(p["reason"]),
        delta=MemoryDelta.model_validate_json(p["delta_json"]),
        status=CandidateStatus(p["status"]),
        created_at=at_utc(p["created_at"]),
        decided_at=from_neo(p.get("decided_at")),
        note=p.get("note"),
    )


def merge_row(m: MergeCandidate) -> Row:
    """One row of ``queue.merge_add`` (the tenant is a parameter of its own)."""
    row = m.model_dump(exclude={"tenant_id", "decided_at"})
    row["status"] = m.status.value
    row["created_at"] = to_neo(m.created_at)
    return row


def merge_from_props(p: Mapping[str, Any]) -> MergeCandidate:
    return MergeCandidate(
        tenant_id=p["tenant_id"],
        candidate_id=p["candidate_id"],
        entity_id=p["entity_id"],
        name=p["name"],
        existing_entity_id=p["existing_entity_id"],
        entity_type=p["entity_type"],
        similarity=float(p["similarity"]),
        episode_id=p["episode_id"],
        status=MergeStatus(p["status"]),
        created_at=at_utc(p["created_at"]),
        decided_at=from_neo(p.get("decided_at")),
    )


__all__ = [
    "Row",
    "assertion_from_props",
    "assertion_row",
    "at_utc",
    "candidate_from_props",
    "candidate_props",
    "entity_from_props",
    "entity_terms",
    "episode_from_props",
    "episode_props",
    "fact_from_props",
    "fact_row",
    "fact_terms",
    "from_neo",
    "merge_from_props",
    "merge_row",
    "open_key",
    "scope_token",
    "text",
    "to_neo",
    "utc",
    "value_key",
]
