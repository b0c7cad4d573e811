"""The durable extraction queue on Neo4j (see :mod:`graph.queue` for the contract).

Every query is a ``cypher/queue_*.cypher`` template run through the connection's one
``run()``. Claims are atomic across processes: a template takes the episode's write lock
before it reads the status it decides on (see ``queue_enqueue.cypher``), and the few
multi-episode races (two holders of one statement) are serialised on a lock node.
The queue's constraints and indexes are created by :meth:`Neo4jQueue.init`,
also run once on first use.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from graph.model import Entity, Episode
from graph.queue import CandidateStatus, MergeCandidate, MergeStatus, PendingCandidate
from graph.retrieval.text import index_terms
from graph.stores.neo4j.codec import (
    Row,
    candidate_from_props,
    candidate_props,
    entity_from_props,
    episode_from_props,
    merge_from_props,
    merge_row,
    scope_token,
    to_neo,
)
from graph.stores.neo4j.connection import Neo4jConnection

# Supporters of a statement: those still held and those already written from it.
_SUPPORTING = [
    s.value for s in (CandidateStatus.PENDING, CandidateStatus.PROMOTED, CandidateStatus.CONFIRMED)
]
# Two workers that picked the same episode: the loser looks again, a few times.
_CLAIM_TRIES = 3
_setup_lock = threading.Lock()
# The entity catalog's first page: a cursor after every entity (newest first).
_AFTER_EVERY_ENTITY = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


class Neo4jQueue:
    """The extraction queue and the review lists, over the store's connection."""

    def __init__(self, conn: Neo4jConnection) -> None:
        self.conn = conn
        self._ready = False
        # The tenant whose episode this queue handed out last (the round robin's place).
        self.last_tenant = ""

    def init(self) -> None:
        """Create the queue's constraints and indexes (idempotent)."""
        with _setup_lock:
            self.conn.run("queue.setup", {})
            self._ready = True

    def _q(self, name: str, params: Mapping[str, Any]) -> list[Row]:
        if not self._ready:
            self.init()
        return self.conn.run(name, params)

    @staticmethod
    def _episode(rows: list[Row]) -> Episode | None:
        return episode_from_props(rows[0]["episode"]) if rows else None

    @staticmethod
    def _updated(rows: list[Row]) -> bool:
        return bool(rows) and int(rows[0]["updated"]) == 1

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
        rows = self._q(
            "queue.enqueue",
            {
                "tenant_id": tenant_id,
                "episode_id": episode_id,
                "at": to_neo(at),
                "from_statuses": sorted(from_statuses),
                "reset": reset_attempts,
                "needs_model": needs_model,
            },
        )
        return self._episode(rows)

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
        self._q(
            "queue.abandon",
            {"tenant_id": tenant_id, "now": to_neo(now), "max_attempts": max_attempts},
        )
        for _ in range(_CLAIM_TRIES):
            rows = self._q(
                "queue.claim",
                {
                    "tenant_id": tenant_id,
                    "now": to_neo(now),
                    "owner": owner,
                    "lease_until": to_neo(lease_until),
                    # One tenant's queue has no round to make (see queue_claim.cypher).
                    "after": self.last_tenant if tenant_id is None else None,
                    "with_model": with_model,
                },
            )
            if not rows:
                return None  # nothing due
            if rows[0]["claimed"]:
                episode = self._episode(rows)
                if episode is not None:
                    self.last_tenant = episode.tenant_id
                return episode
        return None  # lost every race: the caller polls again soon

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
        rows = self._q(
            "queue.claim_episode",
            {
                "tenant_id": tenant_id,
                "episode_id": episode_id,
                "owner": owner,
                "lease_until": to_neo(lease_until),
                "from_statuses": sorted(from_statuses),
            },
        )
        return self._episode(rows)

    def extend_lease(
        self, *, tenant_id: str, episode_id: str, owner: str, lease_until: datetime
    ) -> bool:
        rows = self._q(
            "queue.extend_lease",
            {
                "tenant_id": tenant_id,
                "episode_id": episode_id,
                "owner": owner,
                "lease_until": to_neo(lease_until),
            },
        )
        return self._updated(rows)

    def complete(
        self,
        *,
        tenant_id: str,
        episode_id: str,
        owner: str,
        rejected: Sequence[dict[str, object]],
        usage: dict[str, object] | None = None,
    ) -> bool:
        rows = self._q(
            "queue.complete",
            {
                "tenant_id": tenant_id,
                "episode_id": episode_id,
                "owner": owner,
                "rejected_json": json.dumps(list(rejected)),
                "usage_json": None if usage is None else json.dumps(usage),
            },
        )
        return self._updated(rows)

    def fail(
        self,
        *,
        tenant_id: str,
        episode_id: str,
        owner: str,
        error: str,
        retry_at: datetime | None,
        rejected: Sequence[dict[str, object]] = (),
        usage: dict[str, object] | None = None,
    ) -> bool:
        rows = self._q(
            "queue.fail",
            {
                "tenant_id": tenant_id,
                "episode_id": episode_id,
                "owner": owner,
                "status": "failed" if retry_at is None else "pending",
                "error": error,
                "rejected_json": json.dumps(list(rejected)),
                "usage_json": None if usage is None else json.dumps(usage),
                "retry_at": to_neo(retry_at),
            },
        )
        return self._updated(rows)

    def queue_counts(self, *, tenant_id: str | None = None) -> dict[str, int]:
        if tenant_id is None:
            rows = self._q("queue.counts", {})
        else:
            rows = self._q("queue.counts_tenant", {"tenant_id": tenant_id})
        return {r["status"]: int(r["n"]) for r in rows}

    # -- pending candidates ----------------------------------------------------------
    def hold_candidate(self, *, candidate: PendingCandidate) -> tuple[PendingCandidate, int]:
        k = candidate
        rows = self._q(
            "queue.candidates_hold",
            {
                "tenant_id": k.tenant_id,
                "episode_id": k.episode_id,
                "statement_key": k.statement_key,
                "props": candidate_props(k),
                "supporting": _SUPPORTING,
            },
        )
        return candidate_from_props(rows[0]["candidate"]), int(rows[0]["support"])

    def promote_candidates(
        self, *, tenant_id: str, statement_key: str, now: datetime
    ) -> list[PendingCandidate]:
        rows = self._q(
            "queue.candidates_promote",
            {"tenant_id": tenant_id, "statement_key": statement_key, "now": to_neo(now)},
        )
        return [candidate_from_props(r["candidate"]) for r in rows]

    def candidates(
        self,
        *,
        tenant_id: str,
        status: CandidateStatus | None,
        episode_id: str | None,
        limit: int,
    ) -> list[PendingCandidate]:
        # Each case in the order of its own index (queue.setup): an episode's candidates
        # sought and sorted, a status's or the tenant's read in order, a page at a time.
        params: dict[str, Any] = {"tenant_id": tenant_id, "limit": limit}
        if episode_id is not None:
            name = "queue.candidates_list_episode"
            params["episode_id"] = episode_id
            params["status"] = None if status is None else status.value
        elif status is not None:
            name = "queue.candidates_list"
            params["status"] = status.value
        else:
            name = "queue.candidates_list_all"
        return [candidate_from_props(r["candidate"]) for r in self._q(name, params)]

    def candidate(self, *, tenant_id: str, candidate_id: str) -> PendingCandidate | None:
        rows = self._q(
            "queue.candidates_get", {"tenant_id": tenant_id, "candidate_id": candidate_id}
        )
        return candidate_from_props(rows[0]["candidate"]) if rows else None

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
        rows = self._q(
            "queue.candidates_decide",
            {
                "tenant_id": tenant_id,
                "candidate_id": candidate_id,
                "status": status.value,
                "from_status": from_status.value,
                "now": to_neo(now),
                "note": note,
            },
        )
        return self._updated(rows)

    # -- merge candidates ------------------------------------------------------------
    def add_merge_candidates(self, *, candidates: Sequence[MergeCandidate]) -> None:
        by_tenant: dict[str, list[dict[str, Any]]] = {}
        for m in candidates:
            by_tenant.setdefault(m.tenant_id, []).append(merge_row(m))
        for tenant_id, rows in by_tenant.items():
            self._q("queue.merge_add", {"tenant_id": tenant_id, "rows": rows})

    def merge_candidates(
        self, *, tenant_id: str, status: MergeStatus | None, limit: int
    ) -> list[MergeCandidate]:
        name = "queue.merge_list_all" if status is None else "queue.merge_list"
        params = {"tenant_id": tenant_id, "limit": limit}
        rows = self._q(name, params if status is None else {**params, "status": status.value})
        return [merge_from_props(r["candidate"]) for r in rows]

    def merge_candidate(self, *, tenant_id: str, candidate_id: str) -> MergeCandidate | None:
        rows = self._q("queue.merge_get", {"tenant_id": tenant_id, "candidate_id": candidate_id})
        return merge_from_props(rows[0]["candidate"]) if rows else None

    def decide_merge_candidate(
        self, *, tenant_id: str, candidate_id: str, status: MergeStatus, now: datetime
    ) -> bool:
        rows = self._q(
            "queue.merge_decide",
            {
                "tenant_id": tenant_id,
                "candidate_id": candidate_id,
                "status": status.value,
                "now": to_neo(now),
            },
        )
        return self._updated(rows)

    # -- entity lookup -----------------------------------------------------------------
    def entity_catalog(
        self,
        *,
        tenant_id: str,
        entity_types: Collection[str] | None,
        limit: int,
        after: tuple[datetime, str] | None = None,
    ) -> list[Entity]:
        # The first page starts after every entity: the cursor is the index seek's bound.
        at, after_id = after if after is not None else (_AFTER_EVERY_ENTITY, "")
        params: dict[str, Any] = {
            "tenant_id": tenant_id,
            "limit": limit,
            "after_at": to_neo(at),
            "after_id": after_id,
        }
        if entity_types is None:
            rows = self._q("queue.entity_catalog", params)
        else:
            params["entity_types"] = sorted(entity_types)
            rows = self._q("queue.entity_catalog_types", params)
        return [entity_from_props(tenant_id, r["entity"]) for r in rows]

    def add_entity_alias(self, *, tenant_id: str, entity_id: str, alias: str) -> bool:
        rows = self._q(
            "queue.entity_add_alias",
            {
                "tenant_id": tenant_id,
                "entity_id": entity_id,
                "alias": alias,
                "alias_terms": index_terms(scope_token(tenant_id), alias),
            },
        )
        return self._updated(rows)

    def session_entities(self, *, tenant_id: str, session_id: str, limit: int) -> list[str]:
        rows = self._q(
            "queue.session_entities",
            {"tenant_id": tenant_id, "session_id": session_id, "limit": limit},
        )
        return [r["entity_id"] for r in rows]

    # -- administration --------------------------------------------------------------
    def purge_queue_data(self, *, tenant_id: str) -> None:
        self._q("queue.purge", {"tenant_id": tenant_id})


__all__ = ["Neo4jQueue"]
