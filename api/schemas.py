"""Public request and response models of REST API v1 (``docs/api.md``).

The domain models of :mod:`graph.model` are reused wherever they already have the public
shape (``Fact``, ``Entity``, ``MemoryDelta``, ``EpisodeCreate``, ``Neighborhood``,
``WriteResult``, ``DeleteResult``, ``MemorySchema``); the families below add what a
resource answers beyond the domain record. The client (:mod:`api.client`) parses
responses with these same models.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from graph.model import (
    ConflictPolicy,
    DeleteResult,
    Entity,
    Episode,
    EpisodeCreate,
    Fact,
    Instant,
    MemoryDelta,
    Neighborhood,
    WriteResult,
)
from graph.schema import MemorySchema

API_VERSION = "1.0.0"  # of the REST API and the MCP server

MAX_BATCH = 1000

# -- facts -----------------------------------------------------------------------------
FactPublic = Fact
FactsWritten = WriteResult


class FactsCreate(BaseModel):
    """``POST /facts``: one transaction, all items written or none."""

    model_config = ConfigDict(extra="forbid")

    facts: list[MemoryDelta] = Field(min_length=1, max_length=MAX_BATCH)
    conflict_policy: ConflictPolicy = ConflictPolicy.REJECT


class FactRetract(BaseModel):
    model_config = ConfigDict(extra="forbid")

    valid_to: Instant | None = None  # default: now


class FactsPublic(BaseModel):
    """A page of a state read; pass ``next_cursor`` back as ``cursor`` for the next page."""

    facts: list[Fact]
    next_cursor: str | None = None


class FactHistory(BaseModel):
    """Versions of one timeline by valid_from; ``next_cursor`` when more follow."""

    facts: list[Fact]
    next_cursor: str | None = None


# -- episodes --------------------------------------------------------------------------
class EpisodePublic(Episode):
    """The stored episode and the facts it sourced (currently believed, any valid time),
    a page of them: ``next_cursor`` (as ``cursor``) reads the next."""

    facts: list[Fact] = Field(default_factory=list)
    next_cursor: str | None = None


class EpisodeWritten(EpisodePublic):
    """Answer to ``POST /episodes``: ``created`` is false when the episode already existed."""

    created: bool


# -- entities --------------------------------------------------------------------------
class EntityPublic(Entity):
    """The entity and the facts about it (as subject, then as object) valid at ``as_of``,
    a page of them: ``next_cursor`` (as ``cursor``) reads the next."""

    facts: list[Fact]
    next_cursor: str | None = None


class EntityPredicates(BaseModel):
    """The predicates of every timeline the entity is the subject of, at any valid time
    (as known at ``known_at``), in name order; pass ``next_cursor`` back as ``cursor``."""

    predicates: list[str]
    next_cursor: str | None = None


# -- service ---------------------------------------------------------------------------
class Health(BaseModel):
    status: Literal["ok"] = "ok"


class KindLag(BaseModel):
    """Items of one kind waiting for a vector (all tenants) and the oldest one's age."""

    pending: int
    oldest_pending_seconds: float


class Embeddings(BaseModel):
    """The embedding model and the index lag. Readiness is the store's: ``model_ready``
    false (loading, or ``degraded`` when it cannot load) still answers 200, search then
    waits for the load or runs on fulltext and the graph."""

    model: str
    model_state: Literal["idle", "loading", "ready", "failed"]
    model_ready: bool
    degraded: list[Literal["vector"]] = Field(
        description="Search signals unavailable in this process (['vector'] without a model)"
    )
    error: str | None = None
    pending: int = Field(description="Items waiting for a vector, all kinds and tenants")
    oldest_pending_seconds: float
    kinds: dict[str, KindLag]


class Ready(BaseModel):
    status: Literal["ready"] = "ready"
    embeddings: Embeddings | None = None


# -- errors (RFC 9457) -----------------------------------------------------------------
class ProblemItem(BaseModel):
    """One failing input: the batch item ``index``, the ``field`` and the ``reason``."""

    reason: str
    field: str | None = None
    index: int | None = None
    location: str | None = None  # body, query, path or header


class Problem(BaseModel):
    """``application/problem+json``; further members name what went wrong."""

    model_config = ConfigDict(extra="allow")

    type: str
    title: str
    status: int
    detail: str | None = None
    instance: str | None = None
    errors: list[ProblemItem] | None = None
    conflicting_fact_id: str | None = None
    conflicting_source_episode_id: str | None = None
    request_id: str | None = None  # the answer's X-Request-ID (absent in-process)

    def member(self, name: str) -> Any:
        """A member that is not a declared field (``episode_id``, ``limit``, ...)."""
        extra = self.model_extra or {}
        return extra.get(name)


__all__ = [
    "DeleteResult",
    "Embeddings",
    "EntityPredicates",
    "EntityPublic",
    "EpisodeCreate",
    "EpisodePublic",
    "EpisodeWritten",
    "FactHistory",
    "FactPublic",
    "FactRetract",
    "FactsCreate",
    "FactsPublic",
    "FactsWritten",
    "Health",
    "Instant",
    "KindLag",
    "MemoryDelta",
    "MemorySchema",
    "Neighborhood",
    "Problem",
    "ProblemItem",
    "Ready",
]
