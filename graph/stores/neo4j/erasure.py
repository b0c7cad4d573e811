"""Erasure and retention primitives over one Neo4j write transaction.

:class:`Neo4jEraseOps` is what :mod:`graph.erasure` and :mod:`graph.retention` need
beyond the store's ledger transaction (the store mixes the two), every query a
template (``cypher/erase_*``, ``cypher/retention_*``). Embeddings and fulltext entries
live on the nodes and relationships themselves, so deleting those erases them from
search too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from graph.erasure import HeldCandidate, HeldMerge, Inventory
from graph.stores.neo4j.codec import Row, to_neo

TEMPLATES = {
    "erase.candidates",
    "erase.delete_assertions",
    "erase.delete_candidates",
    "erase.endpoints",
    "erase.entity",
    "erase.entity_timelines",
    "erase.inventory",
    "erase.mentioning_episodes",
    "erase.merges",
    "erase.timeline_locks",
    "erase.versions",
    "retention.episodes_before",
    "retention.expired_timelines",
    "retention.purge_versions",
    "retention.tenants",
}


class Neo4jEraseOps:
    """Mixed into the store's erase transaction (``Neo4jEraseTx`` in :mod:`.store`),
    beside the ledger primitives, whose ``_run`` and ``_lock_nodes`` it uses."""

    def _run(self, name: str, **params: Any) -> list[Row]:
        raise NotImplementedError  # the ledger transaction's

    def _lock_nodes(
        self,
        *,
        tenant_id: str,
        entity_ids: Iterable[str] = (),
        values: Sequence[Row] = (),
        episode_ids: Iterable[str] = (),
    ) -> None:
        raise NotImplementedError  # the ledger transaction's

    # -- erasure -----------------------------------------------------------------------
    def mentioning_episodes(self, *, tenant_id: str, entity_id: str) -> list[str]:
        rows = self._run("erase.mentioning_episodes", tenant_id=tenant_id, entity_id=entity_id)
        return [r["episode_id"] for r in rows]

    def entity_timelines(self, *, tenant_id: str, entity_id: str) -> dict[str, set[str]]:
        rows = self._run("erase.entity_timelines", tenant_id=tenant_id, entity_id=entity_id)
        return {r["key"]: set(r["fact_ids"]) for r in rows}

    def inventory(self, *, tenant_id: str, keys: Sequence[str]) -> Inventory:
        (row,) = self._run("erase.inventory", tenant_id=tenant_id, keys=list(keys))
        return Inventory(
            versions=frozenset((v, f) for v, f in row["versions"]),
            assertions=int(row["assertions"]),
        )

    def delete_assertions(self, *, tenant_id: str, rows: Sequence[tuple[str, int]]) -> None:
        if rows:
            params = [{"key": k, "seq": s} for k, s in rows]
            self._run("erase.delete_assertions", tenant_id=tenant_id, rows=params)

    def candidates(self, *, tenant_id: str) -> list[HeldCandidate]:
        rows = self._run("erase.candidates", tenant_id=tenant_id)
        return [HeldCandidate(r["candidate_id"], r["episode_id"], r["delta_json"]) for r in rows]

    def merges(self, *, tenant_id: str) -> list[HeldMerge]:
        rows = self._run("erase.merges", tenant_id=tenant_id)
        return [
            HeldMerge(r["candidate_id"], r["episode_id"], r["entity_id"], r["existing_entity_id"])
            for r in rows
        ]

    def delete_candidates(
        self, *, tenant_id: str, candidate_ids: Sequence[str], merge_ids: Sequence[str]
    ) -> None:
        if candidate_ids or merge_ids:
            self._run(
                "erase.delete_candidates",
                tenant_id=tenant_id,
                candidate_ids=list(candidate_ids),
                merge_ids=list(merge_ids),
            )

    def drop_timeline_locks(self, *, tenant_id: str, keys: Sequence[str]) -> None:
        if keys:
            self._run("erase.timeline_locks", tenant_id=tenant_id, keys=sorted(keys))

    def erase_entity(self, *, tenant_id: str, entity_id: str, own_keys: Sequence[str]) -> None:
        (ends,) = self._run("erase.endpoints", tenant_id=tenant_id, entity_id=entity_id)
        self._lock_nodes(
            tenant_id=tenant_id,
            entity_ids=[entity_id, *ends["entity_ids"]],
            # They exist (the doomed versions point at them): the MERGE only matches.
            values=[
                {"value_key": k, "value": None, "value_type": None} for k in ends["value_keys"]
            ],
        )
        self._run("erase.entity", tenant_id=tenant_id, entity_id=entity_id, own_keys=list(own_keys))

    # -- retention ---------------------------------------------------------------------
    def expired_timelines(self, *, tenant_id: str, predicate: str, before: datetime) -> list[str]:
        rows = self._run(
            "retention.expired_timelines",
            tenant_id=tenant_id,
            predicate=predicate,
            before=to_neo(before),
        )
        return [r["key"] for r in rows]

    def purge_versions(
        self,
        *,
        tenant_id: str,
        keys: Sequence[str],
        before: datetime,
        facts: Sequence[tuple[str, str]],
    ) -> None:
        if keys or facts:
            self._run(
                "retention.purge_versions",
                tenant_id=tenant_id,
                keys=list(keys),
                before=to_neo(before),
                facts=[{"key": k, "fact_id": f} for k, f in facts],
            )

    def episodes_before(self, *, tenant_id: str, before: datetime, limit: int) -> list[str]:
        rows = self._run(
            "retention.episodes_before", tenant_id=tenant_id, before=to_neo(before), limit=limit
        )
        return [r["episode_id"] for r in rows]

    def retention_tenants(self) -> list[str]:
        return [r["tenant_id"] for r in self._run("retention.tenants")]


__all__ = ["TEMPLATES", "Neo4jEraseOps"]
