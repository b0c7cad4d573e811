"""The storage port: what the service needs from a store. SQLite and Neo4j implement it
(``graph.stores.sqlite``, ``graph.stores.neo4j``).

Writes go through :meth:`Store.transaction`, which yields a :class:`LedgerTx` of small
primitives; the one write algorithm in :mod:`graph.ledger` drives them, so both stores
decide identically. Reads are whole queries, because each store answers them its own way
(SQL, Cypher templates). A store holds its extraction queue as ``store.queue`` (the
:class:`~graph.queue.QueueStore` port) and, for the read path, its search index as
``store.search`` (:class:`graph.retrieval.SearchPort`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol

from graph.model import Direction, Entity, Episode, Fact, FactQuery, Neighborhood
from graph.queue import QueueStore
from graph.schema import MemorySchema
from graph.temporal import Assertion


class LedgerTx(Protocol):
    """One store transaction. Everything done through it commits together or not at all."""

    def lock_timelines(
        self, *, tenant_id: str, keys: Sequence[str], since: datetime | None = None
    ) -> None:
        """Serialise writers on these timelines until the transaction ends. ``since``: what
        the ``current_versions`` call that follows will pass (a store that reads with the
        locks reads only that)."""

    def holds_lease(self, *, tenant_id: str, episode_id: str, owner: str) -> bool:
        """Whether ``owner`` still holds the extraction lease of the episode (it is
        ``processing`` under that owner), read under the lock that claims take, so no
        claim can move it before this transaction ends."""

    def system_time(self, *, tenant_id: str, wall: datetime) -> datetime:
        """The instant this transaction records at: ``wall``, or one microsecond after the
        latest instant the store recorded for the tenant when that is later. Kept in the
        store and held until commit, so system time only moves forward across processes
        whose wall clocks disagree."""

    def put_episode(self, *, episode: Episode) -> tuple[Episode, bool]:
        """:meth:`Store.put_episode` inside this transaction: the episode commits with
        whatever else the transaction writes (its facts), or not at all."""

    def episodes_occurred_at(self, *, tenant_id: str, episode_ids: set[str]) -> dict[str, datetime]:
        """``occurred_at`` of those of these episodes that exist."""

    def entities(self, *, tenant_id: str, entity_ids: set[str]) -> dict[str, Entity]: ...

    def upsert_entities(self, *, tenant_id: str, entities: Sequence[Entity]) -> None:
        """Create these entities, or set the type of existing ones."""

    def current_versions(
        self, *, tenant_id: str, keys: Sequence[str], since: datetime | None = None
    ) -> dict[str, list[Fact]]:
        """Versions not retired in system time, per timeline key, in valid_from order. With
        ``since``, only those whose validity ends after it or never: all that placing facts
        that start at ``since`` or later can change (a write reads no more of a long
        timeline's past than its earliest fact reaches)."""

    def current_fact(self, *, tenant_id: str, fact_id: str) -> Fact | None: ...

    def assertions(self, *, tenant_id: str, keys: Sequence[str]) -> dict[str, list[Assertion]]: ...

    def append_assertions(self, *, tenant_id: str, rows: Sequence[tuple[str, Assertion]]) -> None:
        """Record (timeline key, assertion) pairs in the ledger."""

    def retire(self, *, tenant_id: str, version_ids: Sequence[str], at: datetime) -> None: ...

    def insert(self, *, tenant_id: str, facts: Sequence[Fact], keys: Sequence[str]) -> None:
        """Insert new versions; ``keys[i]`` is the timeline key of ``facts[i]``."""

    def mention(self, *, tenant_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        """Link (episode id, entity id) pairs: the episode mentions the entity."""

    def episode_timelines(self, *, tenant_id: str, episode_id: str) -> set[str]:
        """Keys of the timelines holding assertions sourced by this episode."""

    def delete_episode_data(self, *, tenant_id: str, episode_id: str) -> None:
        """Really delete the episode, its assertions, its mentions and every fact version
        whose only source it is (at every system time)."""


class Store(Protocol):
    url: str

    @property
    def queue(self) -> QueueStore:
        """The durable extraction queue and review lists, over the store's connection."""

    def init(self) -> None:
        """Create tables, constraints and indexes (idempotent)."""

    def close(self) -> None: ...

    def ping(self) -> None:
        """Raise :class:`~graph.errors.StoreUnavailableError` when the store cannot answer."""

    def transaction(self) -> AbstractContextManager[LedgerTx]: ...

    # Episodes
    def put_episode(self, *, episode: Episode) -> tuple[Episode, bool]:
        """Store a new episode; return (stored, created). The same id with the same content
        returns the stored one and False; with other content raises ConflictError."""

    def get_episode(self, *, tenant_id: str, episode_id: str) -> Episode | None: ...

    def save_episode_state(self, *, episode: Episode) -> None:
        """Persist status, attempts, last_error and rejected candidates of an episode."""

    # State reads
    def facts(self, *, tenant_id: str, query: FactQuery) -> list[Fact]: ...

    def history(
        self,
        *,
        tenant_id: str,
        subject: str,
        predicate: str,
        object: str | None,
        known_at: datetime,
        limit: int | None = None,
        after: tuple[datetime, str] | None = None,  # keyset: (valid_from, fact_id)
    ) -> list[Fact]: ...

    def entity(self, *, tenant_id: str, entity_id: str) -> Entity | None: ...

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
        limit: int | None = None,  # more facts than this: ValidationError (field "limit")
    ) -> Neighborhood: ...

    # Schemas
    def get_schema(self, *, tenant_id: str) -> MemorySchema | None: ...

    def put_schema(self, *, tenant_id: str, schema: MemorySchema) -> MemorySchema:
        """Store a tenant's schema with the next version number; return it."""

    # Administration
    def purge_tenant(self, *, tenant_id: str) -> None:
        """Delete everything of one tenant."""
