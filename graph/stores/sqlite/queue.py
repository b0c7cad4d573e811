"""The durable extraction queue on SQLite (see :mod:`graph.queue` for the contract).

Claims are atomic across processes: every state change runs in ``BEGIN IMMEDIATE``
(SQLite's single write lock, taken before the first read) and is a conditional
``UPDATE ... WHERE status = ...`` on top, so even a statement run outside that lock could
not move an episode that someone else moved first.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from graph.model import Entity, Episode
from graph.queue import CandidateStatus, MergeCandidate, MergeStatus, PendingCandidate
from graph.stores.sqlite.codec import (
    candidate_from_row,
    candidate_values,
    entity_unchecked,
    episode_from_row,
    merge_from_row,
    merge_values,
)
from graph.stores.sqlite.connection import SqliteConnection
from graph.timeutil import to_db

QUEUE_SQL = """
CREATE INDEX IF NOT EXISTS episodes_lease ON episodes (status, lease_until);
CREATE INDEX IF NOT EXISTS episodes_fair ON episodes (status, tenant_id, next_attempt_at);
CREATE INDEX IF NOT EXISTS episodes_session ON episodes (tenant_id, session_id, occurred_at);
CREATE TABLE IF NOT EXISTS extraction_candidates (
  tenant_id TEXT NOT NULL, candidate_id TEXT NOT NULL, episode_id TEXT NOT NULL,
  statement_key TEXT NOT NULL, reason TEXT NOT NULL, delta_json TEXT NOT NULL,
  status TEXT NOT NULL, created_at TEXT NOT NULL, decided_at TEXT, note TEXT,
  PRIMARY KEY (tenant_id, candidate_id),
  UNIQUE (tenant_id, episode_id, statement_key)
);
CREATE INDEX IF NOT EXISTS extraction_candidates_statement
  ON extraction_candidates (tenant_id, statement_key, status);
CREATE INDEX IF NOT EXISTS extraction_candidates_status
  ON extraction_candidates (tenant_id, status, created_at);
-- The review list without a status (oldest first) reads its page from here; it sorted
-- every candidate of the tenant. One entry per held candidate.
CREATE INDEX IF NOT EXISTS extraction_candidates_created
  ON extraction_candidates (tenant_id, created_at, candidate_id);
CREATE TABLE IF NOT EXISTS merge_candidates (
  tenant_id TEXT NOT NULL, candidate_id TEXT NOT NULL, entity_id TEXT NOT NULL,
  name TEXT NOT NULL, existing_entity_id TEXT NOT NULL, entity_type TEXT NOT NULL,
  similarity REAL NOT NULL, episode_id TEXT NOT NULL, status TEXT NOT NULL,
  created_at TEXT NOT NULL, decided_at TEXT,
  PRIMARY KEY (tenant_id, candidate_id),
  UNIQUE (tenant_id, entity_id, existing_entity_id)
);
CREATE INDEX IF NOT EXISTS merge_candidates_status
  ON merge_candidates (tenant_id, status, created_at);
CREATE INDEX IF NOT EXISTS merge_candidates_created
  ON merge_candidates (tenant_id, created_at, candidate_id);
"""

# Which episodes this worker can do: with a model every one; without, those that need
# none (needs_model null: stored before it was recorded, anyone may try).
_CAN_DO = "(:with_model OR coalesce(needs_model, 0) = 0)"
# Crashed workers' episodes first: they have waited longest.
_EXPIRED_LEASE = (
    "SELECT tenant_id, episode_id FROM episodes"  # noqa: S608 (a constant fragment)
    " WHERE status = 'processing' AND lease_until <= :now"
    f" AND (:tenant IS NULL OR tenant_id = :tenant) AND {_CAN_DO}"
    " ORDER BY lease_until LIMIT 1"
)
# Then the next tenant after :after (in tenant order) with a due episode, its oldest one
# (index episodes_fair, read in its order: no sort); the caller wraps round to the first
# tenant.
_DUE_PENDING = (
    "SELECT tenant_id, episode_id FROM episodes"  # noqa: S608 (a constant fragment)
    " WHERE status = 'pending' AND tenant_id > :after AND next_attempt_at <= :now"
    f" AND {_CAN_DO}"
    " ORDER BY tenant_id, next_attempt_at LIMIT 1"
)
# Anything due at all (index episodes_queue: one seek)? episodes_fair also holds the
# episodes waiting for a retry, which the round walks past: while all of them wait (a
# model outage), an idle poll would read the whole backlog.
_ANY_DUE = "SELECT 1 FROM episodes WHERE status = 'pending' AND next_attempt_at <= :now LIMIT 1"
# One tenant's queue: its oldest due episode, from the same index. (Asked through the
# round above, with tenant_id = :tenant as a filter, it read every other tenant's pending
# episodes in the index range it walked.)
_TENANT_DUE_PENDING = (
    "SELECT tenant_id, episode_id FROM episodes"  # noqa: S608 (a constant fragment)
    " WHERE status = 'pending' AND tenant_id = :tenant AND next_attempt_at <= :now"
    f" AND {_CAN_DO}"
    " ORDER BY next_attempt_at LIMIT 1"
)

# Supporters of a statement: those still held and those already written from it.
# (IN lists go in as one JSON parameter read by json_each: no SQL is built from values.)
_SUPPORTING = json.dumps(
    [CandidateStatus.PENDING.value, CandidateStatus.PROMOTED.value, CandidateStatus.CONFIRMED.value]
)


def _usage(usage: dict[str, object] | None) -> str | None:
    """The episode's model usage as stored (None keeps the stored one)."""
    return None if usage is None else json.dumps(usage)


class SqliteQueue:
    """The extraction queue and the review lists, over the store's connection."""

    def __init__(self, conn: SqliteConnection) -> None:
        self.conn = conn
        # The tenant whose episode this queue handed out last (the round robin's place).
        self.last_tenant = ""

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
        statuses = json.dumps(sorted(from_statuses))  # an IN list as one parameter
        with self.conn.write() as c:
            r = c.execute(
                "UPDATE episodes SET status = 'pending', next_attempt_at = ?,"
                " lease_owner = NULL, lease_until = NULL,"
                " attempts = CASE WHEN ? THEN 0 ELSE attempts END,"
                " last_error = CASE WHEN ? THEN NULL ELSE last_error END,"
                " needs_model = coalesce(?, needs_model)"
                " WHERE tenant_id = ? AND episode_id = ?"
                " AND status IN (SELECT value FROM json_each(?))"
                " RETURNING *",
                (
                    to_db(at),
                    reset_attempts,
                    reset_attempts,
                    needs_model,
                    tenant_id,
                    episode_id,
                    statuses,
                ),
            ).fetchone()
        return None if r is None else episode_from_row(r)

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
        t = to_db(now)
        with self.conn.write() as c:
            # A lease that expired after the last allowed attempt: give up, visibly.
            p = {"now": t, "tenant": tenant_id, "max": max_attempts}
            c.execute(
                "UPDATE episodes SET status = 'failed', lease_owner = NULL, lease_until = NULL,"
                " next_attempt_at = NULL,"
                " last_error = 'abandoned: the worker lease expired on attempt ' || attempts"
                " || ' of ' || :max || ' (the worker crashed or stalled)'"
                " WHERE status = 'processing' AND lease_until <= :now AND attempts >= :max"
                " AND (:tenant IS NULL OR tenant_id = :tenant)",
                p,
            )
            q = {"now": t, "tenant": tenant_id, "with_model": with_model}
            picked = c.execute(_EXPIRED_LEASE, q).fetchone()
            if picked is None and tenant_id is not None:
                picked = c.execute(_TENANT_DUE_PENDING, q).fetchone()
            elif picked is None and c.execute(_ANY_DUE, {"now": t}).fetchone() is not None:
                fair = {"now": t, "with_model": with_model}
                picked = (
                    c.execute(_DUE_PENDING, {**fair, "after": self.last_tenant}).fetchone()
                    or c.execute(_DUE_PENDING, {**fair, "after": ""}).fetchone()  # round again
                )
            if picked is None:
                return None
            self.last_tenant = picked["tenant_id"]
            r = c.execute(
                "UPDATE episodes SET status = 'processing', lease_owner = ?, lease_until = ?,"
                " attempts = attempts + 1"
                " WHERE tenant_id = ? AND episode_id = ? AND (status = 'pending'"
                " OR (status = 'processing' AND lease_until <= ?)) RETURNING *",
                (owner, to_db(lease_until), picked["tenant_id"], picked["episode_id"], t),
            ).fetchone()
        return None if r is None else episode_from_row(r)

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
        statuses = json.dumps(sorted(from_statuses))  # an IN list as one parameter
        with self.conn.write() as c:
            r = c.execute(
                "UPDATE episodes SET status = 'processing', lease_owner = ?, lease_until = ?,"
                " attempts = attempts + 1"
                " WHERE tenant_id = ? AND episode_id = ?"
                " AND status IN (SELECT value FROM json_each(?))"
                " RETURNING *",
                (owner, to_db(lease_until), tenant_id, episode_id, statuses),
            ).fetchone()
        return None if r is None else episode_from_row(r)

    def extend_lease(
        self, *, tenant_id: str, episode_id: str, owner: str, lease_until: datetime
    ) -> bool:
        with self.conn.write() as c:
            cur = c.execute(
                "UPDATE episodes SET lease_until = ? WHERE tenant_id = ? AND episode_id = ?"
                " AND status = 'processing' AND lease_owner = ?",
                (to_db(lease_until), tenant_id, episode_id, owner),
            )
            return cur.rowcount == 1

    def complete(
        self,
        *,
        tenant_id: str,
        episode_id: str,
        owner: str,
        rejected: Sequence[dict[str, object]],
        usage: dict[str, object] | None = None,
    ) -> bool:
        with self.conn.write() as c:
            cur = c.execute(
                "UPDATE episodes SET status = 'extracted', last_error = NULL, rejected_json = ?,"
                " usage_json = COALESCE(?, usage_json),"
                " lease_owner = NULL, lease_until = NULL, next_attempt_at = NULL"
                " WHERE tenant_id = ? AND episode_id = ? AND status = 'processing'"
                " AND lease_owner = ?",
                (json.dumps(list(rejected)), _usage(usage), tenant_id, episode_id, owner),
            )
            return cur.rowcount == 1

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
        status = "failed" if retry_at is None else "pending"
        with self.conn.write() as c:
            cur = c.execute(
                "UPDATE episodes SET status = ?, last_error = ?, rejected_json = ?,"
                " usage_json = COALESCE(?, usage_json),"
                " next_attempt_at = ?, lease_owner = NULL, lease_until = NULL"
                " WHERE tenant_id = ? AND episode_id = ? AND status = 'processing'"
                " AND lease_owner = ?",
                (
                    status,
                    error,
                    json.dumps(list(rejected)),
                    _usage(usage),
                    None if retry_at is None else to_db(retry_at),
                    tenant_id,
                    episode_id,
                    owner,
                ),
            )
            return cur.rowcount == 1

    def queue_counts(self, *, tenant_id: str | None = None) -> dict[str, int]:
        if tenant_id is None:
            rows = self.conn.read("SELECT status, COUNT(*) AS n FROM episodes GROUP BY status")
        else:
            rows = self.conn.read(
                "SELECT status, COUNT(*) AS n FROM episodes WHERE tenant_id = ? GROUP BY status",
                (tenant_id,),
            )
        return {r["status"]: int(r["n"]) for r in rows}

    # -- pending candidates ----------------------------------------------------------
    def hold_candidate(self, *, candidate: PendingCandidate) -> tuple[PendingCandidate, int]:
        k = candidate
        with self.conn.write() as c:
            c.execute(
                "INSERT OR IGNORE INTO extraction_candidates (tenant_id, candidate_id, episode_id,"
                " statement_key, reason, delta_json, status, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                candidate_values(k),
            )
            stored = c.execute(
                "SELECT * FROM extraction_candidates WHERE tenant_id = ? AND episode_id = ?"
                " AND statement_key = ?",
                (k.tenant_id, k.episode_id, k.statement_key),
            ).fetchone()
            r = c.execute(
                "SELECT COUNT(DISTINCT episode_id) AS n FROM extraction_candidates"
                " WHERE tenant_id = ? AND statement_key = ?"
                " AND status IN (SELECT value FROM json_each(?))",
                (k.tenant_id, k.statement_key, _SUPPORTING),
            ).fetchone()
        return candidate_from_row(stored), int(r["n"])

    def promote_candidates(
        self, *, tenant_id: str, statement_key: str, now: datetime
    ) -> list[PendingCandidate]:
        with self.conn.write() as c:
            rows = c.execute(
                "UPDATE extraction_candidates SET status = 'promoted', decided_at = ?"
                " WHERE tenant_id = ? AND statement_key = ? AND status = 'pending' RETURNING *",
                (to_db(now), tenant_id, statement_key),
            ).fetchall()
        return sorted((candidate_from_row(r) for r in rows), key=lambda k: k.created_at)

    def candidates(
        self,
        *,
        tenant_id: str,
        status: CandidateStatus | None,
        episode_id: str | None,
        limit: int,
    ) -> list[PendingCandidate]:
        # The oldest first. Each case reads in the order of its own index; the unary +
        # keeps the order (or the status) off the index that the planner would otherwise
        # prefer and walk, checking every candidate of the tenant (or of the status).
        sql = "SELECT * FROM extraction_candidates WHERE tenant_id = ?"
        params: list[Any] = [tenant_id]
        if episode_id is not None:
            # An episode's own candidates (one model answer's at most), sought and sorted.
            sql += " AND episode_id = ?"
            params.append(episode_id)
            if status is not None:
                sql += " AND +status = ?"
                params.append(status.value)
            order = "+created_at, candidate_id"
        elif status is not None:  # extraction_candidates_status
            sql += " AND status = ?"
            params.append(status.value)
            order = "created_at, +candidate_id"
        else:  # the first rows of extraction_candidates_created
            order = "created_at, candidate_id"
        sql += f" ORDER BY {order} LIMIT ?"
        params.append(limit)
        return [candidate_from_row(r) for r in self.conn.read(sql, params)]

    def candidate(self, *, tenant_id: str, candidate_id: str) -> PendingCandidate | None:
        rows = self.conn.read(
            "SELECT * FROM extraction_candidates WHERE tenant_id = ? AND candidate_id = ?",
            (tenant_id, candidate_id),
        )
        return candidate_from_row(rows[0]) if rows else None

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
        with self.conn.write() as c:
            cur = c.execute(
                "UPDATE extraction_candidates SET status = ?, decided_at = ?, note = ?"
                " WHERE tenant_id = ? AND candidate_id = ? AND status = ?",
                (status.value, to_db(now), note, tenant_id, candidate_id, from_status.value),
            )
            return cur.rowcount == 1

    # -- merge candidates ------------------------------------------------------------
    def add_merge_candidates(self, *, candidates: Sequence[MergeCandidate]) -> None:
        if not candidates:
            return
        with self.conn.write() as c:
            c.executemany(
                "INSERT OR IGNORE INTO merge_candidates (tenant_id, candidate_id, entity_id, name,"
                " existing_entity_id, entity_type, similarity, episode_id, status, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [merge_values(m) for m in candidates],
            )

    def merge_candidates(
        self, *, tenant_id: str, status: MergeStatus | None, limit: int
    ) -> list[MergeCandidate]:
        # As the review list: merge_candidates_created without a status, the status
        # index with one (the unary + keeps the order off merge_candidates_created).
        sql = "SELECT * FROM merge_candidates WHERE tenant_id = ?"
        params: list[Any] = [tenant_id]
        order = "created_at, candidate_id"
        if status is not None:
            sql += " AND status = ?"
            params.append(status.value)
            order = "created_at, +candidate_id"
        sql += f" ORDER BY {order} LIMIT ?"
        params.append(limit)
        return [merge_from_row(r) for r in self.conn.read(sql, params)]

    def merge_candidate(self, *, tenant_id: str, candidate_id: str) -> MergeCandidate | None:
        rows = self.conn.read(
            "SELECT * FROM merge_candidates WHERE tenant_id = ? AND candidate_id = ?",
            (tenant_id, candidate_id),
        )
        return merge_from_row(rows[0]) if rows else None

    def decide_merge_candidate(
        self, *, tenant_id: str, candidate_id: str, status: MergeStatus, now: datetime
    ) -> bool:
        with self.conn.write() as c:
            cur = c.execute(
                "UPDATE merge_candidates SET status = ?, decided_at = ?"
                " WHERE tenant_id = ? AND candidate_id = ? AND status = 'open'",
                (status.value, to_db(now), tenant_id, candidate_id),
            )
            return cur.rowcount == 1

    # -- entity lookup -----------------------------------------------------------------
    def entity_catalog(
        self,
        *,
        tenant_id: str,
        entity_types: Collection[str] | None,
        limit: int,
        after: tuple[datetime, str] | None = None,
    ) -> list[Entity]:
        if entity_types is None:
            rows = self._catalog_page(tenant_id, None, limit, after)
        else:
            # A page of each type (entities_type_created), merged here: one seek per type,
            # where a filter on entities_created walked the tenant's entities until the
            # page filled, all of them for a type with fewer than a page left.
            rows = [
                r
                for t in sorted(entity_types)
                for r in self._catalog_page(tenant_id, t, limit, after)
            ]
            rows.sort(key=lambda r: r["entity_id"])
            rows.sort(key=lambda r: r["created_at"], reverse=True)  # stable: ties by id
            del rows[limit:]
        # Read for every model-extracted episode: rows this store wrote are built without
        # re-validation.
        return [entity_unchecked(r) for r in rows]

    def _catalog_page(
        self,
        tenant_id: str,
        entity_type: str | None,
        limit: int,
        after: tuple[datetime, str] | None,
    ) -> list[sqlite3.Row]:
        sql = "SELECT * FROM entities WHERE tenant_id = ?"
        params: list[Any] = [tenant_id]
        if entity_type is not None:
            sql += " AND entity_type = ?"
            params.append(entity_type)
        if after is not None:  # keyset: after (created_at descending, entity_id)
            # The bound on created_at alone lets the page seek the index.
            at = to_db(after[0])
            sql += " AND created_at <= ? AND (created_at < ? OR entity_id > ?)"
            params += [at, at, after[1]]
        sql += " ORDER BY created_at DESC, entity_id LIMIT ?"
        params.append(limit)
        return self.conn.read(sql, params)

    def add_entity_alias(self, *, tenant_id: str, entity_id: str, alias: str) -> bool:
        with self.conn.write() as c:
            r = c.execute(
                "SELECT aliases_json FROM entities WHERE tenant_id = ? AND entity_id = ?",
                (tenant_id, entity_id),
            ).fetchone()
            if r is None:
                return False
            aliases: list[str] = json.loads(r["aliases_json"])
            if alias not in aliases:
                c.execute(
                    "UPDATE entities SET aliases_json = ? WHERE tenant_id = ? AND entity_id = ?",
                    (json.dumps([*aliases, alias]), tenant_id, entity_id),
                )
        return True

    def session_entities(self, *, tenant_id: str, session_id: str, limit: int) -> list[str]:
        rows = self.conn.read(
            "SELECT m.entity_id, MAX(e.occurred_at) AS last_seen FROM episode_mentions m"
            " JOIN episodes e ON e.tenant_id = m.tenant_id AND e.episode_id = m.episode_id"
            " WHERE e.tenant_id = ? AND e.session_id = ?"
            " GROUP BY m.entity_id ORDER BY last_seen DESC, m.entity_id LIMIT ?",
            (tenant_id, session_id, limit),
        )
        return [r["entity_id"] for r in rows]

    # -- administration --------------------------------------------------------------
    def purge_queue_data(self, *, tenant_id: str) -> None:
        with self.conn.write() as c:
            c.execute("DELETE FROM extraction_candidates WHERE tenant_id = ?", (tenant_id,))
            c.execute("DELETE FROM merge_candidates WHERE tenant_id = ?", (tenant_id,))


__all__ = ["QUEUE_SQL", "SqliteQueue"]
