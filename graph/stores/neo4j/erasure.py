"""Erasure and retention primitives over one Neo4j write transaction.

:class:`Neo4jEraseOps` is what :mod:`graph.erasure` and :mod:`graph.retention` need
beyond the store's ledger transaction (the store mixes the two), every query a
template (``cypher/erase_*``, ``cypher/retention_*``). Embeddings and fulltext entries
live on the nodes and relationships themselves, so deleting those erases them from
search too.

:class:`Neo4jEraseReads` is what a forget dry run reads instead, in one managed read
transaction (:func:`in_read`): it takes no lock, and a cluster routes it to a reader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from neo4j import ManagedTransaction

from graph.erasure import EraseReads, HeldCandidate, HeldMerge, Inventory
from graph.model import Entity, Fact
from graph.stores.neo4j.codec import (
    Row,
    assertion_from_props,
    at_utc,
    entity_from_props,
    fact_from_props,
    to_neo,
)
from graph.stores.neo4j.connection import Neo4jConnection
from graph.temporal import Assertion

T = TypeVar("T")

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


class Neo4jEraseReads(Neo4jEraseOps):
    """The reads of a forget dry run (:class:`graph.erasure.EraseReads`) in one managed
    read transaction ``tx``: the templates the store's write transaction runs, and every
    version of a timeline (``erase.versions``). Its deleting methods (inherited) are never
    called: a dry run's changes stay in memory (and a read transaction refuses them)."""

    def __init__(self, conn: Neo4jConnection, tx: ManagedTransaction) -> None:
        self._conn = conn
        self._tx = tx

    def _run(self, name: str, **params: Any) -> list[Row]:
        return self._conn.run(name, params, tx=self._tx)

    def entities(self, *, tenant_id: str, entity_ids: set[str]) -> dict[str, Entity]:
        if not entity_ids:
            return {}
        rows = self._run("entities.get", tenant_id=tenant_id, entity_ids=sorted(entity_ids))
        return {r["entity"]["entity_id"]: entity_from_props(tenant_id, r["entity"]) for r in rows}

    def episodes_occurred_at(self, *, tenant_id: str, episode_ids: set[str]) -> dict[str, datetime]:
        if not episode_ids:
            return {}
        rows = self._run(
            "ledger.episodes_occurred_at", tenant_id=tenant_id, episode_ids=sorted(episode_ids)
        )
        return {r["episode_id"]: at_utc(r["occurred_at"]) for r in rows}

    def episode_timelines(self, *, tenant_id: str, episode_id: str) -> set[str]:
        rows = self._run("ledger.episode_timelines", tenant_id=tenant_id, episode_id=episode_id)
        return {r["key"] for r in rows}

    def timeline_versions(self, *, tenant_id: str, keys: Sequence[str]) -> dict[str, list[Fact]]:
        out: dict[str, list[Fact]] = {k: [] for k in keys}
        if keys:
            for r in self._run("erase.versions", tenant_id=tenant_id, keys=list(keys)):
                f = r["fact"]
                out[f["timeline_key"]].append(fact_from_props(f))
        return out

    def assertions(self, *, tenant_id: str, keys: Sequence[str]) -> dict[str, list[Assertion]]:
        out: dict[str, list[Assertion]] = {k: [] for k in keys}
        if keys:
            for r in self._run("ledger.assertions", tenant_id=tenant_id, keys=list(keys)):
                p = r["assertion"]
                out[p["timeline_key"]].append(assertion_from_props(p))
        return out


def in_read(store: Any, work: Callable[[EraseReads], T], /) -> T:
    """Run ``work`` on the reads of one managed read transaction of the store's database
    (run again whole on a transient error: ``work`` only reads)."""
    conn: Neo4jConnection = store.conn
    return conn.read(lambda tx: work(Neo4jEraseReads(conn, tx)))


__all__ = ["TEMPLATES", "Neo4jEraseOps", "Neo4jEraseReads", "in_read"]
