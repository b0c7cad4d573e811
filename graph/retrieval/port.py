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
from typing import Any, NamedTuple, Protocol, TypeVar, runtime_checkable

from graph.embeddings import Embedder, Vectors
from graph.model import Cardinality, Entity, Episode, Fact
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


class HeldVersion(NamedTuple):
    """One version as a staleness check reads it: not a :class:`Fact` (a check over an
    episode that sourced a bulk write reads thousands, and decoding whole versions was
    most of its cost), only what its two rules ask."""

    fact_id: str
    subject: str
    predicate: str
    said: Any  # the object's id for a relation, else the value: what text would state
    now: bool  # valid at the window's as_of
    single: bool  # of a single-valued timeline: the whole (subject, predicate)
    sources: tuple[str, ...]

    @classmethod
    def of(cls, f: Fact, as_of: datetime) -> HeldVersion:
        """The reference reading of a whole version (what the stores compute in place)."""
        return cls(
            f.fact_id,
            f.subject,
            f.predicate,
            f.object if f.object is not None else f.value,
            f.valid_from <= as_of and (f.valid_to is None or f.valid_to > as_of),
            f.cardinality == Cardinality.ONE,
            tuple(f.sources),
        )


@dataclass(frozen=True)
class HeldVersions:
    around: list[HeldVersion]
    pairs: list[HeldVersion]


def uncovered(
    around: Sequence[HeldVersion], pairs: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The ``pairs`` whose versions ``around`` does not hold in full: a single-valued
    timeline is all of its (subject, predicate); a many-valued one is one object of it."""
    covered = {(v.subject, v.predicate) for v in around if v.single}
    return sorted(set(pairs) - covered)


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

    def staleness_versions(
        self,
        *,
        tenant_id: str,
        episode_ids: Sequence[str],
        pairs: Sequence[tuple[str, str]],
        window: Window,
    ) -> HeldVersions:
        """What one staleness check reads (:mod:`graph.retrieval.stale`), each version
        known at the window's ``known_at`` as a :class:`HeldVersion`: ``around``, every
        version on the timelines ``episode_ids`` asserted on; ``pairs``, every version of
        those (subject, predicate) ``pairs`` that ``around`` does not cover
        (:func:`uncovered`). Stores that can also load the episodes' records on the way
        do (:class:`GatheredReads`)."""

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
        all of these. Its ``staleness_versions`` also loads the records of the episodes
        it is asked about (an expansion reads only which episodes are visible: the check is
        where a page's episodes are first read in full)."""


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
    "HeldVersion",
    "HeldVersions",
    "Hit",
    "ItemKind",
    "Pending",
    "SearchPort",
    "SearchableStore",
    "Window",
    "uncovered",
]
