"""What retrieval needs from a store, beyond the state reads of :class:`graph.port.Store`.

A searchable store holds a :class:`SearchPort` as ``store.search``; both stores do
(``graph.stores.sqlite.search``, ``graph.stores.neo4j.search``). Every method is scoped to
one tenant and, where time applies, to one :class:`Window`: a fact is returned only in the
version valid at ``as_of`` as known at ``known_at``, an episode or entity only once it was
recorded by ``known_at``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol, TypeVar, runtime_checkable

from graph.embeddings import Embedder, Vectors
from graph.model import Entity, Episode, Fact
from graph.port import Store

T = TypeVar("T")


class ItemKind(StrEnum):
    FACT = "fact"
    ENTITY = "entity"
    EPISODE = "episode"


@dataclass(frozen=True)
class Window:
    """The two time axes of one read: valid time ``as_of``, system time ``known_at``."""

    as_of: datetime
    known_at: datetime
    # True when known_at is "now" (the request named none): a store may then read only the
    # versions open in system time, which its indexes can filter on directly.
    latest: bool = False


@dataclass(frozen=True)
class Hit:
    """One candidate from one index: the item's id (fact_id, entity_id or episode_id) and
    the index's own score, higher is better (BM25 or cosine)."""

    item_id: str
    score: float


@dataclass(frozen=True)
class Pending:
    """Items of one tenant and kind still waiting for a vector from a model: how many, and
    when the first of them was written (``None`` if the store cannot tell)."""

    tenant_id: str
    kind: ItemKind
    count: int
    oldest: datetime | None


@runtime_checkable
class SearchPort(Protocol):
    def index_pending(
        self,
        *,
        tenant_id: str,
        embedder: Embedder,
        batch_size: int = 256,
        limit: int | None = None,
    ) -> int:
        """Embed the tenant's searchable items that have no vector from this model yet, at
        most ``limit`` of them (all without one), oldest first; return how many were
        embedded. Only the tenant's own items are read and written. Safe to run
        concurrently (a vector is stored once)."""

    def pending(self, *, model: str) -> list[Pending]:
        """What waits for a vector from ``model``, per tenant and kind (none listed when
        nothing waits). The indexer's work list and the index-lag figures."""

    def fulltext(
        self, *, tenant_id: str, kind: ItemKind, terms: Sequence[str], window: Window, limit: int
    ) -> list[Hit]:
        """BM25 over fact sentences, entity names or episode text; any term may match."""

    def vector_search(
        self,
        *,
        tenant_id: str,
        kind: ItemKind,
        vector: Vectors,
        model: str,
        window: Window,
        limit: int,
    ) -> list[Hit]:
        """Nearest items by cosine similarity among those with a vector from ``model``."""

    def facts_by_id(
        self, *, tenant_id: str, fact_ids: Sequence[str], window: Window
    ) -> dict[str, Fact]:
        """The version of each fact valid in the window; facts with none are left out."""

    def facts_touching(
        self, *, tenant_id: str, entity_ids: Sequence[str], window: Window, limit: int
    ) -> list[Fact]:
        """Facts valid in the window whose subject or object is one of these entities."""

    def facts_sourced_by(
        self, *, tenant_id: str, episode_ids: Sequence[str], known_at: datetime
    ) -> list[Fact]:
        """Every version known at ``known_at`` (at any valid time) on the timelines these
        episodes asserted on: those citing them and the others of the same timelines."""

    def timeline_versions(
        self, *, tenant_id: str, pairs: Sequence[tuple[str, str]], known_at: datetime
    ) -> list[Fact]:
        """Every version known at ``known_at`` of these (subject, predicate) timelines."""

    def episodes_by_id(
        self, *, tenant_id: str, episode_ids: Sequence[str], known_at: datetime
    ) -> Mapping[str, Episode]:
        """Those recorded by ``known_at``. A store may decode each on first access."""

    def entities_by_id(
        self, *, tenant_id: str, entity_ids: Sequence[str], known_at: datetime
    ) -> Mapping[str, Entity]:
        """Those created by ``known_at``. A store may decode each on first access."""

    def mentions_of(self, *, tenant_id: str, episode_ids: Sequence[str]) -> list[tuple[str, str]]:
        """(episode id, entity id) for the entities these episodes mention."""

    def mentioning(
        self, *, tenant_id: str, entity_ids: Sequence[str], known_at: datetime, limit: int
    ) -> list[tuple[str, str]]:
        """(episode id, entity id) for episodes that mention these entities, latest first."""

    def session_neighbors(
        self, *, tenant_id: str, episode_ids: Sequence[str], known_at: datetime, radius: int
    ) -> list[tuple[str, str, int]]:
        """(episode, neighbour, offset): up to ``radius`` episodes before (offset -1, -2, …)
        and after (1, 2, …) each one in its session, ordered by ``occurred_at`` then
        ``recorded_at``."""


@runtime_checkable
class GatheredReads(SearchPort, Protocol):
    """A view of a search index for one search, inside one read transaction: told up front
    what a search will read, it fetches it in one query per stage and answers the
    :class:`SearchPort` calls that follow from what it fetched. A call it did not foresee
    (other arguments) is read from the store as usual, in the same transaction; either way
    every answer is exactly the store's."""

    def prefetch_candidates(
        self,
        *,
        tenant_id: str,
        terms: Sequence[str],
        vector: Vectors | None,
        model: str,
        window: Window,
        limit: int,
    ) -> None:
        """Fetch what ``fulltext`` and ``vector_search`` will be asked for every kind."""

    def prefetch_expansion(
        self,
        *,
        tenant_id: str,
        window: Window,
        fact_ids: Sequence[str],
        top_fact_ids: Sequence[str],
        seed_ids: Sequence[str],
        entity_ids: Sequence[str],
        episode_ids: Sequence[str],
        context_ids: Sequence[str],
        hop: bool,
        max_facts: int,
        max_mentions: int,
        radius: int,
    ) -> None:
        """Fetch the expansion around the candidates and everything it names: the
        candidates' facts (``fact_ids``), one hop of ``facts_touching`` from the seeds and
        the endpoints of the visible ``top_fact_ids`` (when ``hop``), the seeds'
        ``mentioning`` episodes, ``mentions_of`` the candidate episodes, the
        ``session_neighbors`` of ``context_ids``, and the episodes and entities named by
        all of these."""

    def prefetch_staleness(
        self,
        *,
        tenant_id: str,
        episode_ids: Sequence[str],
        pairs: Sequence[tuple[str, str]],
        known_at: datetime,
    ) -> None:
        """Fetch what one staleness check will read: ``facts_sourced_by`` of
        ``episode_ids``, and ``timeline_versions`` of those ``pairs`` that the versions
        found do not cover (a single-valued timeline is its whole pair), and the records of
        ``episode_ids`` themselves (an expansion may have read only which episodes are
        visible: the check is where a page's episodes are first read in full)."""


@runtime_checkable
class GatheringPort(Protocol):
    """A search index that can run one search's reads in a couple of round trips."""

    def gather(self, work: Callable[[GatheredReads], T]) -> T:
        """Run ``work`` over a :class:`GatheredReads` view, in one read transaction (which
        may be run again whole after a transient failure)."""


@runtime_checkable
class SearchableStore(Store, Protocol):
    """A store that can also search: what :class:`graph.retrieval.Retriever` works on."""

    @property
    def search(self) -> SearchPort:
        """The store's search index, over the store's connection."""


__all__ = [
    "GatheredReads",
    "GatheringPort",
    "Hit",
    "ItemKind",
    "Pending",
    "SearchPort",
    "SearchableStore",
    "Window",
]
