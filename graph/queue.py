"""The durable extraction queue and the review lists of the write path: what a store adds.

The queue lives in the ``episodes`` records themselves (status, attempts, last_error,
lease_owner, lease_until, next_attempt_at), so an episode and its place in the queue can
never disagree. Episode states::

    stored ──enqueue──▶ pending ──claim──▶ processing ──complete──▶ extracted
                          ▲                    │
                          └──fail(retry_at)────┤──fail(None)──▶ failed ──enqueue──▶ pending
                                               └──lease expires: another worker claims it

A claim is atomic across processes and machines: exactly one worker gets an episode,
and only the lease holder can complete or fail it, so a worker that lost its lease
(crashed, paused) cannot overwrite the outcome of the one that took over.

Beside the queue: *pending candidates* (facts the schema holds back until a person
confirms them or enough episodes support them) and *merge candidates* (entities whose
names look like duplicates, listed for review, never merged silently).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel

from graph.model import Entity, Episode, MemoryDelta


class CandidateStatus(StrEnum):
    PENDING = "pending"  # held back, waiting for a confirmation or more support
    CONFIRMED = "confirmed"  # confirmed through the API and written
    PROMOTED = "promoted"  # reached its minimum support and written
    REJECTED = "rejected"  # refused through the API, or its write failed


class HoldReason(StrEnum):
    CONFIRMATION = "requires_confirmation"
    SUPPORT = "min_support"


class PendingCandidate(BaseModel):
    """A validated candidate write that the schema's policy holds back."""

    tenant_id: str
    candidate_id: str
    episode_id: str
    statement_key: str  # (subject, predicate, value or object): what supporters share
    reason: HoldReason
    delta: MemoryDelta  # complete: source_episode_id and valid_from filled in
    status: CandidateStatus = CandidateStatus.PENDING
    created_at: datetime
    decided_at: datetime | None = None
    note: str | None = None


class MergeStatus(StrEnum):
    OPEN = "open"
    ACCEPTED = "accepted"  # the name became an alias of the existing entity
    DISMISSED = "dismissed"


class MergeCandidate(BaseModel):
    """A new entity whose name is close to an existing entity's of the same type."""

    tenant_id: str
    candidate_id: str
    entity_id: str  # the entity the candidate fact created or named
    name: str
    existing_entity_id: str
    entity_type: str
    similarity: float
    episode_id: str
    status: MergeStatus = MergeStatus.OPEN
    created_at: datetime
    decided_at: datetime | None = None


class QueueStore(Protocol):
    """Queue and review operations: every store holds one as ``store.queue``
    (``graph.stores.sqlite.queue``, ``graph.stores.neo4j.queue``)."""

    # -- the queue -------------------------------------------------------------------
    def enqueue(
        self,
        *,
        tenant_id: str,
        episode_id: str,
        at: datetime,
        from_statuses: Collection[str],
        reset_attempts: bool,
        needs_model: bool | None = None,
    ) -> Episode | None:
        """Make the episode pending, due at ``at``, if its status is one of
        ``from_statuses``; return it, or None when it is missing or in another state.
        ``needs_model`` (when not None) records which workers may claim it."""

    def claim(
        self,
        *,
        owner: str,
        now: datetime,
        lease_until: datetime,
        max_attempts: int,
        tenant_id: str | None = None,
        with_model: bool = True,
    ) -> Episode | None:
        """Atomically take the next due episode (of one tenant, or of any): pending and due, or
        processing with an expired lease. Sets processing, the lease, and attempts + 1.
        An expired lease on an episode that already used ``max_attempts`` marks it failed
        instead (a poison episode must not kill workers forever).

        Fair across tenants: expired leases first (oldest first), then pending episodes
        tenant by tenant in turn (round robin over the tenants with due work, from the one
        after the tenant this queue object served last; the oldest due episode of each),
        so one tenant's backlog does not hold up another's. ``with_model=False``: a worker
        without a model takes only episodes that do not need one."""

    def claim_episode(
        self,
        *,
        tenant_id: str,
        episode_id: str,
        owner: str,
        now: datetime,
        lease_until: datetime,
        from_statuses: Collection[str],
    ) -> Episode | None:
        """Take one given episode (the ``extract=sync`` path) if its status allows."""

    def extend_lease(
        self, *, tenant_id: str, episode_id: str, owner: str, lease_until: datetime
    ) -> bool: ...

    def complete(
        self,
        *,
        tenant_id: str,
        episode_id: str,
        owner: str,
        rejected: Sequence[dict[str, object]],
    ) -> bool:
        """processing → extracted, only for the lease holder; False if the lease was lost."""

    def fail(
        self,
        *,
        tenant_id: str,
        episode_id: str,
        owner: str,
        error: str,
        retry_at: datetime | None,
        rejected: Sequence[dict[str, object]] = (),
    ) -> bool:
        """processing → pending due at ``retry_at``, or → failed when it is None."""

    def queue_counts(self, *, tenant_id: str | None = None) -> dict[str, int]:
        """Episodes per status (of one tenant, or of all)."""

    # -- pending candidates ----------------------------------------------------------
    def hold_candidate(self, *, candidate: PendingCandidate) -> tuple[PendingCandidate, int]:
        """Record a held candidate, once per episode and statement (a redelivered episode
        gets the stored one back), and count the distinct episodes supporting its
        statement: pending ones and those already written from it."""

    def promote_candidates(
        self, *, tenant_id: str, statement_key: str, now: datetime
    ) -> list[PendingCandidate]:
        """Atomically flip every pending candidate of this statement to promoted and
        return them; a concurrent promoter gets an empty list, so it is written once."""

    def candidates(
        self,
        *,
        tenant_id: str,
        status: CandidateStatus | None,
        episode_id: str | None,
        limit: int,
    ) -> list[PendingCandidate]: ...

    def candidate(self, *, tenant_id: str, candidate_id: str) -> PendingCandidate | None: ...

    def decide_candidate(
        self,
        *,
        tenant_id: str,
        candidate_id: str,
        status: CandidateStatus,
        now: datetime,
        note: str | None,
        from_status: CandidateStatus = CandidateStatus.PENDING,
    ) -> bool:
        """Set the candidate's status if it is still ``from_status``."""

    # -- merge candidates ------------------------------------------------------------
    def add_merge_candidates(self, *, candidates: Sequence[MergeCandidate]) -> None:
        """Record them; a pair (entity, existing entity) is recorded once."""

    def merge_candidates(
        self, *, tenant_id: str, status: MergeStatus | None, limit: int
    ) -> list[MergeCandidate]: ...

    def merge_candidate(self, *, tenant_id: str, candidate_id: str) -> MergeCandidate | None: ...

    def decide_merge_candidate(
        self, *, tenant_id: str, candidate_id: str, status: MergeStatus, now: datetime
    ) -> bool:
        """Set the status if the candidate is still open."""

    # -- entity lookup for resolution and prompts -------------------------------------
    def entity_catalog(
        self,
        *,
        tenant_id: str,
        entity_types: Collection[str] | None,
        limit: int,
        after: tuple[datetime, str] | None = None,
    ) -> list[Entity]:
        """A page of the tenant's entities (of these types), newest first (created_at
        descending, then entity_id), for name resolution; ``after`` is the (created_at,
        entity_id) of the last entity of the previous page."""

    def add_entity_alias(self, *, tenant_id: str, entity_id: str, alias: str) -> bool: ...

    def session_entities(self, *, tenant_id: str, session_id: str, limit: int) -> list[str]:
        """Entities that the session's most recent episodes mention, most recent first."""

    # -- administration --------------------------------------------------------------
    def purge_queue_data(self, *, tenant_id: str) -> None:
        """Delete the tenant's pending and merge candidates."""


__all__ = [
    "CandidateStatus",
    "HoldReason",
    "MergeCandidate",
    "MergeStatus",
    "PendingCandidate",
    "QueueStore",
]
