"""Domain records. Every record carries its tenant; times are aware UTC datetimes.

A *fact* is one interval of one timeline; the store keeps every *version* of it in system
time (``recorded_at`` → ``retired_at``) and never edits a version in place.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictFloat,
    StringConstraints,
    field_validator,
)

TENANT_RE = r"^[a-z0-9][a-z0-9_-]{0,63}$"
PREDICATE_RE = r"^[a-z][a-z0-9_]{0,63}$"
TYPE_RE = r"^[A-Z][A-Za-z0-9_]{0,63}$"
# Entity and episode ids: printable, no control characters, no "/" (ids are URL path
# segments, and servers decode %2F before routing), bounded; not "." or ".." either
# (_fetchable). These patterns serve pydantic, whose engine reads "$" as the end of the
# text; Python code matches them with fullmatch, since Python's "$" also matches before
# a final newline.
ID_RE = r"^[^\x00-\x1f\x7f/]{1,256}$"
DOT_SEGMENTS = frozenset({".", ".."})


def _fetchable(value: str) -> str:
    if value in DOT_SEGMENTS:
        raise ValueError(
            "'.' and '..' cannot be ids: clients drop them from URL paths (dot segments),"
            " so they could never be read back"
        )
    return value


TenantId = Annotated[str, StringConstraints(pattern=TENANT_RE)]
EntityId = Annotated[str, StringConstraints(pattern=ID_RE), AfterValidator(_fetchable)]
EpisodeId = Annotated[str, StringConstraints(pattern=ID_RE), AfterValidator(_fetchable)]
Predicate = Annotated[str, StringConstraints(pattern=PREDICATE_RE)]
TypeName = Annotated[str, StringConstraints(pattern=TYPE_RE)]
Scalar = str | int | float | bool

# Deltas one episode may carry: as many as one POST /facts batch (one transaction).
MAX_EPISODE_FACTS = 1000
DEFAULT_ENTITY_TYPE = "Entity"
# An entity type becomes a Neo4j label beside ``Entity``; these labels are the store's own
# (cypher/*.cypher): a user's entity carrying one would be read, locked or deleted as a
# store record. ``Entity`` itself is the generic type: a write may name it, a schema may
# not declare it. Both stores refuse the same names, so data moves between them.
RESERVED_TYPE_NAMES = frozenset(
    {
        "Assertion",
        "CandidateStatement",
        "Episode",
        "ExtractionCandidate",
        "FactVector",
        "MergeCandidate",
        "Schema",
        "SystemClock",
        "Timeline",
        "Value",
    }
)


def reserved_type_problem(name: str, *, declared: bool = False) -> str | None:
    """Why ``name`` cannot be an entity type (None when it can); ``declared``: named as a
    type of a schema, where the generic ``Entity`` is reserved too."""
    if name in RESERVED_TYPE_NAMES or (declared and name == DEFAULT_ENTITY_TYPE):
        return (
            f"entity type {name!r} is reserved: sgam's stores use it for their own records"
            f" (reserved: {', '.join(sorted(RESERVED_TYPE_NAMES | {DEFAULT_ENTITY_TYPE}))};"
            f" {DEFAULT_ENTITY_TYPE!r} is the generic type every entity has)"
        )
    return None


DEFAULT_MEMORY_TYPE = "semantic"
DEFAULT_RETENTION = "keep"

_tenant_re = re.compile(TENANT_RE)

# Every timestamp must be an instant the stores can hold in UTC, with a day to spare for
# the temporal core's arithmetic: ``9999-12-31T23:00:00-05:00`` has no UTC form at all.
EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, tzinfo=UTC)
# A literal value is part of index keys as escaped JSON (Neo4j range indexes hold at most
# ~8 KB per key, with the tenant and subject beside it); longer text belongs in an episode.
MAX_VALUE_JSON = 2048
# Numbers both stores hold exactly: 64-bit integers and finite doubles.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# Free-form JSON (episode content and metadata, event mappings) nests at most this deep:
# serializers and parsers recurse, and no honest document needs more.
MAX_JSON_DEPTH = 32


def instant_problem(value: datetime) -> str | None:
    try:
        utc = value.astimezone(UTC)
    except OverflowError:
        utc = None
    if utc is None or not EARLIEST <= utc <= LATEST:
        return "timestamp out of range: must fall between 0001-01-02 and 9999-12-30 (UTC)"
    return None


def _in_range(value: datetime) -> datetime:
    problem = instant_problem(value)
    if problem is not None:
        raise ValueError(problem)
    # UTC from here on: a write answers in the form a read does (RFC 3339 with "Z"),
    # whatever offset the client sent.
    return value.astimezone(UTC)


# RFC 3339 text starts with its full date; pydantic alone would also read a number, or a
# string of digits (any query parameter), as Unix time in seconds or milliseconds (guessed
# by size), with no offset given.
_RFC3339_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
NOT_RFC3339 = "not an RFC 3339 timestamp with an offset, such as 2026-06-01T09:00:00Z"


def _timestamp_text(value: Any) -> Any:
    if isinstance(value, datetime) or (isinstance(value, str) and _RFC3339_DATE.match(value)):
        return value
    raise ValueError(NOT_RFC3339)


Instant = Annotated[AwareDatetime, BeforeValidator(_timestamp_text), AfterValidator(_in_range)]


def nests_deeper_than(value: object, limit: int) -> bool:
    """Whether ``value`` holds containers (objects, arrays) more than ``limit`` deep.

    ``{}`` is one level, ``{"a": []}`` two. Iterative, so no depth can overflow the
    stack, and it stops at the first container past the limit.
    """
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list | tuple))
    return False


def too_deep(limit: int = MAX_JSON_DEPTH) -> str:
    return f"nests deeper than {limit} levels of objects and arrays (the limit is {limit})"


def depth_problem(value: object, limit: int = MAX_JSON_DEPTH) -> str | None:
    return too_deep(limit) if nests_deeper_than(value, limit) else None


def _shallow(value: Any) -> Any:
    problem = depth_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def valid_tenant(tenant_id: str) -> bool:
    return _tenant_re.fullmatch(tenant_id) is not None  # "acme\n" is no tenant


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


class ValueType(StrEnum):
    STRING = "string"
    NUMBER = "number"
    BOOLEAN = "boolean"
    DATE = "date"
    DATETIME = "datetime"
    ENTITY = "entity"


class Cardinality(StrEnum):
    ONE = "one"
    MANY = "many"


class ConflictPolicy(StrEnum):
    REJECT = "reject"
    LATEST_RECORDED_WINS = "latest_recorded_wins"
    HIGHEST_CONFIDENCE_WINS = "highest_confidence_wins"


class EpisodeKind(StrEnum):
    MESSAGE = "message"
    DOCUMENT = "document"
    TOOL_RESULT = "tool_result"
    EVENT = "event"


class EpisodeStatus(StrEnum):
    STORED = "stored"
    PENDING = "pending"
    PROCESSING = "processing"
    EXTRACTED = "extracted"
    FAILED = "failed"


class ExtractMode(StrEnum):
    NONE = "none"
    SYNC = "sync"
    BACKGROUND = "background"


class WriteStatus(StrEnum):
    CREATED = "created"  # a new fact interval was recorded
    UNCHANGED = "unchanged"  # identical redelivery: nothing written
    CORROBORATED = "corroborated"  # same statement from another episode: source added
    KEPT_EXISTING = "kept_existing"  # the policy kept the recorded fact


def canonical_value(value: Scalar | None) -> str | None:
    """The comparable form of a literal; ``1`` and ``1.0`` are one number."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, sort_keys=True)


class MemoryDelta(BaseModel):
    """One candidate write: a fact as proposed by a client, an extractor or a mapper."""

    model_config = ConfigDict(extra="forbid")

    subject: EntityId
    subject_type: TypeName | None = None
    predicate: Predicate
    value: Scalar | None = None
    object: EntityId | None = None
    object_type: TypeName | None = None
    valid_from: Instant | None = None
    valid_to: Instant | None = None
    source_episode_id: EpisodeId | None = None
    # Strict: "0.9" is a 422, not a number (a JSON integer such as 1 still is one).
    confidence: StrictFloat = Field(default=1.0, ge=0.0, le=1.0)
    memory_type: Annotated[str, StringConstraints(pattern=PREDICATE_RE)] | None = None
    retention_policy: Annotated[str, StringConstraints(pattern=PREDICATE_RE)] | None = None
    evidence: Annotated[str, StringConstraints(max_length=2000)] | None = None

    @field_validator("value")
    @classmethod
    def _storable_value(cls, v: Scalar | None) -> Scalar | None:
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError("a number must be finite (no NaN or Infinity)")
        if isinstance(v, int) and not isinstance(v, bool) and not INT64_MIN <= v <= INT64_MAX:
            raise ValueError("an integer must fit 64 bits (write larger numbers with an exponent)")
        if isinstance(v, str) and len(json.dumps(v)) > MAX_VALUE_JSON:
            raise ValueError(
                f"a literal value may take at most {MAX_VALUE_JSON} characters as escaped JSON"
                " (a non-ASCII character counts 6 or 12); keep long text in an episode"
            )
        return v


_OBJECT_SETATTR = object.__setattr__


class Fact(BaseModel):
    """One version of one fact interval, as stored and as returned."""

    tenant_id: str
    fact_id: str
    version_id: str
    subject: str
    subject_type: str
    predicate: str
    value: Scalar | None = None
    value_type: ValueType
    object: str | None = None
    object_type: str | None = None
    valid_from: datetime
    valid_to: datetime | None = None
    recorded_at: datetime
    retired_at: datetime | None = None
    source_episode_id: str | None
    sources: list[str] = Field(default_factory=list)
    supersedes: list[str] = Field(default_factory=list)
    confidence: float
    memory_type: str
    schema_version: int
    retention_policy: str
    cardinality: Cardinality

    @classmethod
    def trusted(
        cls,
        *,
        tenant_id: str,
        fact_id: str,
        version_id: str,
        subject: str,
        subject_type: str,
        predicate: str,
        value: Scalar | None,
        value_type: ValueType,
        object: str | None,
        object_type: str | None,
        valid_from: datetime,
        valid_to: datetime | None,
        recorded_at: datetime,
        retired_at: datetime | None,
        source_episode_id: str | None,
        sources: list[str],
        supersedes: list[str],
        confidence: float,
        memory_type: str,
        schema_version: int,
        retention_policy: str,
        cardinality: Cardinality,
    ) -> Fact:
        """A version built from values the ledger or a store already typed (a checked
        delta, a row it wrote), without validating them again: every field is a typed,
        required argument, so the type checker does the checking, and a bulk write no
        longer pays pydantic's validation for each of its versions (a third of the cost
        of building one; ``model_construct`` is slower still)."""
        fact = cls.__new__(cls)
        object_setattr = _OBJECT_SETATTR  # `object` is a field name here
        object_setattr(
            fact,
            "__dict__",
            {
                "tenant_id": tenant_id,
                "fact_id": fact_id,
                "version_id": version_id,
                "subject": subject,
                "subject_type": subject_type,
                "predicate": predicate,
                "value": value,
                "value_type": value_type,
                "object": object,
                "object_type": object_type,
                "valid_from": valid_from,
                "valid_to": valid_to,
                "recorded_at": recorded_at,
                "retired_at": retired_at,
                "source_episode_id": source_episode_id,
                "sources": sources,
                "supersedes": supersedes,
                "confidence": confidence,
                "memory_type": memory_type,
                "schema_version": schema_version,
                "retention_policy": retention_policy,
                "cardinality": cardinality,
            },
        )
        object_setattr(fact, "__pydantic_fields_set__", set(_FACT_FIELDS))
        object_setattr(fact, "__pydantic_extra__", None)
        object_setattr(fact, "__pydantic_private__", None)
        return fact

    def sentence(self) -> str:
        """A short text form used for fulltext and embeddings."""
        what = self.object if self.object is not None else self.value
        return f"{self.subject} {self.predicate.replace('_', ' ')} {what}"


_FACT_FIELDS = frozenset(Fact.model_fields)


class Entity(BaseModel):
    tenant_id: str
    entity_id: str
    entity_type: str = DEFAULT_ENTITY_TYPE
    name: str
    aliases: list[str] = Field(default_factory=list)
    summary: str | None = None
    created_at: datetime


EpisodeContent = str | dict[str, Any]


class EpisodeCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    episode_id: EpisodeId | None = None
    kind: EpisodeKind = EpisodeKind.MESSAGE
    source: Annotated[str, StringConstraints(max_length=256)] | None = None
    content: EpisodeContent
    occurred_at: Instant
    session_id: Annotated[str, StringConstraints(max_length=256)] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    extract: ExtractMode | None = None
    # Deltas the client extracted itself, written with the episode in one transaction.
    facts: list[MemoryDelta] | None = Field(default=None, max_length=MAX_EPISODE_FACTS)

    @field_validator("content", "metadata", mode="before")
    @classmethod
    def _not_too_deep(cls, v: Any) -> Any:
        return _shallow(v)  # before pydantic walks the value


class ModelUsage(BaseModel):
    """What extracting one episode cost in model calls, summed over its attempts: tokens as
    the endpoint's ``usage`` reported them, and the time spent waiting for the model."""

    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0  # completions answered
    latency_seconds: float = 0.0  # wall time of the model requests, retries included

    def plus(self, other: ModelUsage | None) -> ModelUsage:
        if other is None:
            return self
        return ModelUsage(
            model=other.model,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            calls=self.calls + other.calls,
            latency_seconds=self.latency_seconds + other.latency_seconds,
        )


class Episode(BaseModel):
    tenant_id: str
    episode_id: str
    kind: EpisodeKind
    source: str | None = None
    content: EpisodeContent
    content_hash: str
    occurred_at: datetime
    session_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    recorded_at: datetime
    status: EpisodeStatus = EpisodeStatus.STORED
    attempts: int = 0
    last_error: str | None = None
    rejected: list[dict[str, Any]] = Field(default_factory=list)
    # Queue-internal, never answered: whether extracting it needs a model (no event
    # mapping matches it). None: not known (stored before it was recorded) — any worker.
    needs_model: bool | None = Field(default=None, exclude=True)
    usage: ModelUsage | None = None  # model usage of its extraction, when a model ran

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return json.dumps(self.content, sort_keys=True)


class FactQuery(BaseModel):
    """A state read: facts valid at ``as_of`` as known at ``known_at``."""

    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    memory_type: str | None = None
    source_episode_id: str | None = None
    as_of: datetime | None  # None: at any valid time (e.g. every fact an episode sourced)
    known_at: datetime
    limit: int = 100
    after: tuple[str, str, str] | None = None  # keyset cursor: last (subject, predicate, fact_id)


class Direction(StrEnum):
    OUT = "out"
    IN = "in"
    BOTH = "both"


class Neighborhood(BaseModel):
    entities: list[Entity]
    facts: list[Fact]


class WriteResult(BaseModel):
    facts: list[Fact]
    outcomes: list[WriteStatus]


class DeleteResult(BaseModel):
    episode_id: str
    facts_removed: int
    facts_restored: int


Mode = Literal["read", "write"]
