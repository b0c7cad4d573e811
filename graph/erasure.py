"""Erasure: forget an entity for good, written once over the store primitives.

Forgetting entity E (a real run in a few transactions, see :func:`forget`):

1. every episode that mentions E is deleted exactly as ``DELETE /episodes/{id}`` does
   (:func:`graph.ledger.delete_episode`): what only it asserted goes, and the intervals
   it had cut on other timelines are folded again and repaired;
2. on every timeline that still holds a version about E (E its subject or object, at any
   system time), the ledger entries about E go: on E's own timelines (E is the key's
   subject, or its ``@object``) all of them; on a shared single-valued timeline (an
   ``advisor`` that was E and later someone else) the assertions naming E and the
   retractions of E's facts; such a timeline is folded again and repaired as in (1);
3. every version about E at every system time, its mentions, the review candidates that
   name it (or cite a deleted episode), and the entity itself are deleted.

A dry run does all of it too, on a :class:`Preview`: the same steps over one snapshot of
the store (a read transaction, :class:`EraseReads`), their changes kept in memory, so its
counts are exactly what a real run would delete, and it takes no write lock (on SQLite the
one writer lock, which every tenant's writes wait for). Counts compare the touched
timelines before and after: a version, an assertion or a fact id that no longer exists
there went.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, TypeVar, cast, runtime_checkable

from pydantic import BaseModel

from graph import ledger
from graph.errors import NotFoundError, TransientStoreError, invalid
from graph.model import Entity, Episode, Fact, MemoryDelta
from graph.port import LedgerTx
from graph.temporal import Assertion, diff, fold
from graph.timeutil import CLOCK


@dataclass(frozen=True)
class Inventory:
    """What some timelines hold at every system time."""

    versions: frozenset[tuple[str, str]]  # (version_id, fact_id)
    assertions: int


@dataclass(frozen=True)
class HeldCandidate:
    """A review candidate, as far as erasure needs to know it."""

    candidate_id: str
    episode_id: str
    delta_json: str


@dataclass(frozen=True)
class HeldMerge:
    candidate_id: str
    episode_id: str
    entity_id: str
    existing_entity_id: str


class EraseOps(Protocol):
    """The erasure and retention primitives of one store transaction; the same
    transaction's :class:`~graph.port.LedgerTx` does the ledger part."""

    def mentioning_episodes(self, *, tenant_id: str, entity_id: str) -> list[str]:
        """Ids of the episodes that mention the entity, or source a version about it."""

    def entity_timelines(self, *, tenant_id: str, entity_id: str) -> dict[str, set[str]]:
        """Timeline key → fact ids of the versions (any system time) whose subject or
        object is the entity."""

    def inventory(self, *, tenant_id: str, keys: Sequence[str]) -> Inventory: ...

    def delete_assertions(self, *, tenant_id: str, rows: Sequence[tuple[str, int]]) -> None:
        """Delete ledger entries by (timeline key, seq)."""

    def candidates(self, *, tenant_id: str) -> list[HeldCandidate]: ...

    def merges(self, *, tenant_id: str) -> list[HeldMerge]: ...

    def delete_candidates(
        self, *, tenant_id: str, candidate_ids: Sequence[str], merge_ids: Sequence[str]
    ) -> None: ...

    def drop_timeline_locks(self, *, tenant_id: str, keys: Sequence[str]) -> None:
        """Delete the lock nodes of these timelines, where a store keeps any (Neo4j)."""

    def erase_entity(self, *, tenant_id: str, entity_id: str, own_keys: Sequence[str]) -> None:
        """Delete every version whose subject or object is the entity (any system time),
        the timelines ``own_keys`` (their lock nodes), the entity's mentions and the
        entity; literal value nodes no version uses any more go too."""

    # -- retention (graph.retention) ---------------------------------------------------
    def expired_timelines(self, *, tenant_id: str, predicate: str, before: datetime) -> list[str]:
        """Keys of the timelines of ``predicate`` with a version (any system time) whose
        validity ended before ``before``."""

    def purge_versions(
        self,
        *,
        tenant_id: str,
        keys: Sequence[str],
        before: datetime,
        facts: Sequence[tuple[str, str]],
    ) -> None:
        """On these timelines, delete the versions retired in system time whose validity
        ended before ``before``; and every version and ledger entry of the (timeline key,
        fact id) pairs ``facts``."""

    def episodes_before(self, *, tenant_id: str, before: datetime, limit: int) -> list[str]:
        """Up to ``limit`` ids of episodes that occurred before ``before``, oldest first."""

    def retention_tenants(self) -> list[str]:
        """Every tenant that has a schema (only a schema can set a retention)."""


class EraseTx(LedgerTx, EraseOps, Protocol):
    """A store transaction with both sets of primitives."""


@runtime_checkable
class ErasableStore(Protocol):
    """A store that can erase (both stores can): :class:`graph.port.Store` plus this."""

    def erase_transaction(self) -> AbstractContextManager[EraseTx]:
        """A write transaction with the erasure and retention primitives."""

    def erase_snapshot(self, work: Callable[[EraseReads], T], /) -> T:
        """Run ``work`` on :class:`EraseReads` of one read transaction (a snapshot that
        writers do not wait for): a forget dry run plans on it."""

    def expired_timelines(self, *, tenant_id: str, predicate: str, before: datetime) -> list[str]:
        """:meth:`EraseOps.expired_timelines` as a read of its own, outside any write
        transaction: a purge plans with it (a scan of the tenant's versions of one
        predicate), then re-reads each timeline under its lock, so a stale plan deletes
        nothing it should not, and the scan holds no write lock (on SQLite, the one
        writer lock of every tenant)."""


T = TypeVar("T")
TX_ATTEMPTS = 5


def in_erase_transaction(store: ErasableStore, work: Callable[[EraseTx], T]) -> T:
    """Run ``work`` in one erase transaction, again from the start on a transient error
    (as :meth:`graph.service.MemoryService.in_transaction` does for writes)."""
    for attempt in range(1, TX_ATTEMPTS + 1):
        try:
            with store.erase_transaction() as tx:
                return work(tx)
        except TransientStoreError:
            if attempt == TX_ATTEMPTS:
                raise
            time.sleep(0.02 * 2**attempt)
    raise AssertionError("unreachable")


def erasable(store: object) -> ErasableStore:
    """The store, as one that can erase; a store that cannot is refused by name."""
    if not isinstance(store, ErasableStore):
        raise invalid(f"the store {getattr(store, 'url', store)!r} cannot erase", field="store")
    return store


class EraseReads(Protocol):
    """The reads a forget dry run plans with, all on one snapshot of the store (one read
    transaction): :class:`Preview` replays :func:`forget_entity` over them."""

    def entities(self, *, tenant_id: str, entity_ids: set[str]) -> dict[str, Entity]: ...

    def episodes_occurred_at(
        self, *, tenant_id: str, episode_ids: set[str]
    ) -> dict[str, datetime]: ...

    def mentioning_episodes(self, *, tenant_id: str, entity_id: str) -> list[str]: ...

    def entity_timelines(self, *, tenant_id: str, entity_id: str) -> dict[str, set[str]]: ...

    def episode_timelines(self, *, tenant_id: str, episode_id: str) -> set[str]: ...

    def timeline_versions(self, *, tenant_id: str, keys: Sequence[str]) -> dict[str, list[Fact]]:
        """Every version (any system time) of each timeline, by key."""

    def assertions(self, *, tenant_id: str, keys: Sequence[str]) -> dict[str, list[Assertion]]: ...

    def candidates(self, *, tenant_id: str) -> list[HeldCandidate]: ...

    def merges(self, *, tenant_id: str) -> list[HeldMerge]: ...


# At most this many timelines' worth of episodes are deleted in one transaction of a real
# forget: on SQLite every tenant's writes wait for its one writer lock while it lasts
# (~0.1 s per 1,000 timelines on the bench machine), so a forget of an entity with a long
# history releases it between batches instead of holding it for all of them.
TIMELINES_PER_TX = 1_000


def forget(
    store: ErasableStore,
    *,
    tenant_id: str,
    entity_id: str,
    dry_run: bool,
    between: Callable[[], None] | None = None,
) -> ForgetResult:
    """Forget an entity (:func:`forget_entity`). A dry run answers what a real run would
    delete, on a :class:`Preview` of the store's snapshot: it takes no write lock.

    A real run plans on a snapshot too, then deletes the episodes that mention the entity
    in transactions of at most :data:`TIMELINES_PER_TX` timelines each (as ``DELETE
    /episodes/{id}`` would, one after the other), and does the rest in a last transaction.
    Each transaction leaves the store consistent; one interrupted part-way has deleted some
    of the episodes and not the entity, and running the forget again finishes it. Counts
    are of what the plan saw (and what the last transaction found since). ``between`` is
    called after the plan and after each batch (a test's window between transactions)."""
    if dry_run:
        return store.erase_snapshot(
            lambda reads: preview(reads, tenant_id=tenant_id, entity_id=entity_id)
        )
    plan = store.erase_snapshot(
        lambda reads: begin(Preview(reads), tenant_id=tenant_id, entity_id=entity_id)
    )
    if between is not None:
        between()
    for episodes in plan.batches(TIMELINES_PER_TX):
        batch = in_erase_transaction(store, _deleting(plan, tenant_id, entity_id, episodes))
        plan.deleted += batch.episodes
        plan.candidates += batch.candidates
        plan.done |= batch.cleared
        if between is not None:
            between()
    done = in_erase_transaction(
        store, lambda tx: finish(tx, plan, tenant_id=tenant_id, entity_id=entity_id)
    )
    after = store.erase_snapshot(
        lambda reads: Preview(reads).inventory(tenant_id=tenant_id, keys=sorted(done.keys))
    )
    return tally(plan, done, after, entity_id=entity_id, dry_run=False)


def preview(reads: EraseReads, *, tenant_id: str, entity_id: str) -> ForgetResult:
    """What forgetting the entity would delete, read from ``reads`` (one snapshot)."""
    try:
        forget_entity(Preview(reads), tenant_id=tenant_id, entity_id=entity_id, dry_run=True)
    except DryRun as done:
        return cast(ForgetResult, done.result)
    raise AssertionError("unreachable: a dry run ends in DryRun")


class Preview:
    """An :class:`EraseTx` over :class:`EraseReads` that writes nothing: its changes are
    kept in memory, so :func:`forget_entity` (and :func:`graph.ledger.delete_episode` in
    it) run unchanged and see what they would see in a real transaction.

    A timeline is read whole (every version, every ledger entry) the first time it is
    read or changed; from then on it is answered from memory. A read across timelines
    (an entity's, an episode's) is the snapshot's for the timelines not read yet, and
    memory's for the others. Only what erasure does is supported: it never appends
    ledger entries, upserts entities, mentions or writes episodes."""

    def __init__(self, reads: EraseReads) -> None:
        self._reads = reads
        self._versions: dict[str, dict[str, Fact]] = {}  # key → version id → version
        self._ledger: dict[str, list[Assertion]] = {}
        self._gone_episodes: set[str] = set()
        self._gone_entities: set[str] = set()
        self._gone_candidates: set[str] = set()
        self._gone_merges: set[str] = set()

    def _load(self, tenant_id: str, keys: Sequence[str]) -> None:
        missing = sorted({k for k in keys if k not in self._versions})
        if not missing:
            return
        versions = self._reads.timeline_versions(tenant_id=tenant_id, keys=missing)
        ledgers = self._reads.assertions(tenant_id=tenant_id, keys=missing)
        for k in missing:
            self._versions[k] = {f.version_id: f for f in versions.get(k, [])}
            self._ledger[k] = list(ledgers.get(k, []))

    # -- reads -------------------------------------------------------------------------
    def lock_timelines(
        self, *, tenant_id: str, keys: Sequence[str], since: datetime | None = None
    ) -> None:
        self._load(tenant_id, keys)  # nothing to lock: a snapshot does not change

    def system_time(self, *, tenant_id: str, wall: datetime) -> datetime:
        return wall  # only stamps what a dry run never writes

    def episodes_occurred_at(self, *, tenant_id: str, episode_ids: set[str]) -> dict[str, datetime]:
        found = self._reads.episodes_occurred_at(tenant_id=tenant_id, episode_ids=episode_ids)
        return {e: at for e, at in found.items() if e not in self._gone_episodes}

    def entities(self, *, tenant_id: str, entity_ids: set[str]) -> dict[str, Entity]:
        found = self._reads.entities(tenant_id=tenant_id, entity_ids=entity_ids)
        return {e: x for e, x in found.items() if e not in self._gone_entities}

    def current_versions(
        self, *, tenant_id: str, keys: Sequence[str], since: datetime | None = None
    ) -> dict[str, list[Fact]]:
        self._load(tenant_id, keys)
        return {
            k: sorted(
                (
                    f
                    for f in self._versions[k].values()
                    if f.retired_at is None
                    and (since is None or f.valid_to is None or f.valid_to > since)
                ),
                key=lambda f: f.valid_from,
            )
            for k in keys
        }

    def assertions(self, *, tenant_id: str, keys: Sequence[str]) -> dict[str, list[Assertion]]:
        self._load(tenant_id, keys)
        return {k: list(self._ledger[k]) for k in keys}

    def episode_timelines(self, *, tenant_id: str, episode_id: str) -> set[str]:
        read = self._reads.episode_timelines(tenant_id=tenant_id, episode_id=episode_id)
        return {k for k in read if k not in self._ledger} | {
            k
            for k, entries in self._ledger.items()
            if any(a.source_episode_id == episode_id for a in entries)
        }

    def mentioning_episodes(self, *, tenant_id: str, entity_id: str) -> list[str]:
        # Read first, before any change (as forget_entity does): the snapshot's answer.
        found = self._reads.mentioning_episodes(tenant_id=tenant_id, entity_id=entity_id)
        return [e for e in found if e not in self._gone_episodes]

    def entity_timelines(self, *, tenant_id: str, entity_id: str) -> dict[str, set[str]]:
        read = self._reads.entity_timelines(tenant_id=tenant_id, entity_id=entity_id)
        out = {k: ids for k, ids in read.items() if k not in self._versions}
        for k, versions in self._versions.items():
            ids = {f.fact_id for f in versions.values() if entity_id in (f.subject, f.object)}
            if ids:
                out[k] = ids
        return out

    def inventory(self, *, tenant_id: str, keys: Sequence[str]) -> Inventory:
        self._load(tenant_id, keys)
        return Inventory(
            versions=frozenset((v, f.fact_id) for k in keys for v, f in self._versions[k].items()),
            assertions=sum(len(self._ledger[k]) for k in keys),
        )

    def candidates(self, *, tenant_id: str) -> list[HeldCandidate]:
        found = self._reads.candidates(tenant_id=tenant_id)
        return [c for c in found if c.candidate_id not in self._gone_candidates]

    def merges(self, *, tenant_id: str) -> list[HeldMerge]:
        found = self._reads.merges(tenant_id=tenant_id)
        return [m for m in found if m.candidate_id not in self._gone_merges]

    # -- changes, in memory --------------------------------------------------------------
    def retire(self, *, tenant_id: str, version_ids: Sequence[str], at: datetime) -> None:
        doomed = set(version_ids)
        for versions in self._versions.values():
            for v, f in versions.items():
                if v in doomed and f.retired_at is None:
                    versions[v] = f.model_copy(update={"retired_at": at})

    def insert(self, *, tenant_id: str, facts: Sequence[Fact], keys: Sequence[str]) -> None:
        self._load(tenant_id, keys)
        for f, k in zip(facts, keys, strict=True):
            self._versions[k][f.version_id] = f

    def delete_episode_data(self, *, tenant_id: str, episode_id: str) -> None:
        # As the stores do: the versions whose only source it is (on the timelines it
        # asserted on), its ledger entries, its mentions and the episode.
        keys = sorted(self.episode_timelines(tenant_id=tenant_id, episode_id=episode_id))
        self._load(tenant_id, keys)
        for k in keys:
            versions = self._versions[k]
            for v in [v for v, f in versions.items() if f.sources == [episode_id]]:
                del versions[v]
            self._ledger[k] = [a for a in self._ledger[k] if a.source_episode_id != episode_id]
        self._gone_episodes.add(episode_id)

    def delete_assertions(self, *, tenant_id: str, rows: Sequence[tuple[str, int]]) -> None:
        doomed: dict[str, set[int]] = {}
        for k, seq in rows:
            doomed.setdefault(k, set()).add(seq)
        self._load(tenant_id, list(doomed))
        for k, seqs in doomed.items():
            self._ledger[k] = [a for a in self._ledger[k] if a.seq not in seqs]

    def delete_candidates(
        self, *, tenant_id: str, candidate_ids: Sequence[str], merge_ids: Sequence[str]
    ) -> None:
        self._gone_candidates.update(candidate_ids)
        self._gone_merges.update(merge_ids)

    def drop_timeline_locks(self, *, tenant_id: str, keys: Sequence[str]) -> None:
        return None  # a preview holds no lock nodes, and counts none

    def erase_entity(self, *, tenant_id: str, entity_id: str, own_keys: Sequence[str]) -> None:
        keys = sorted(self.entity_timelines(tenant_id=tenant_id, entity_id=entity_id))
        self._load(tenant_id, keys)
        for k in keys:
            versions = self._versions[k]
            for v in [v for v, f in versions.items() if entity_id in (f.subject, f.object)]:
                del versions[v]
        self._gone_entities.add(entity_id)

    # -- never called by erasure -------------------------------------------------------
    def _unsupported(self, what: str) -> NotImplementedError:
        return NotImplementedError(f"a forget preview does not {what}")

    def holds_lease(self, *, tenant_id: str, episode_id: str, owner: str) -> bool:
        raise self._unsupported("hold leases")

    def put_episode(self, *, episode: Episode) -> tuple[Episode, bool]:
        raise self._unsupported("write episodes")

    def upsert_entities(self, *, tenant_id: str, entities: Sequence[Entity]) -> None:
        raise self._unsupported("write entities")

    def current_fact(self, *, tenant_id: str, fact_id: str) -> Fact | None:
        raise self._unsupported("read facts by id")

    def append_assertions(self, *, tenant_id: str, rows: Sequence[tuple[str, Assertion]]) -> None:
        raise self._unsupported("append ledger entries")

    def mention(self, *, tenant_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        raise self._unsupported("write mentions")

    def expired_timelines(self, *, tenant_id: str, predicate: str, before: datetime) -> list[str]:
        raise self._unsupported("purge")

    def purge_versions(
        self,
        *,
        tenant_id: str,
        keys: Sequence[str],
        before: datetime,
        facts: Sequence[tuple[str, str]],
    ) -> None:
        raise self._unsupported("purge")

    def episodes_before(self, *, tenant_id: str, before: datetime, limit: int) -> list[str]:
        raise self._unsupported("purge")

    def retention_tenants(self) -> list[str]:
        raise self._unsupported("purge")


class ForgetResult(BaseModel):
    """What forgetting an entity deleted (or, in a dry run, would delete)."""

    entity_id: str
    dry_run: bool
    entities: int
    facts: int
    versions: int
    assertions: int
    episodes: int
    candidates: int


class DryRun(Exception):
    """Raised at the end of a dry run so that the store rolls the transaction back."""

    def __init__(self, result: BaseModel) -> None:
        super().__init__("dry run")
        self.result = result


def is_own_key(key: str, entity_id: str) -> bool:
    """Whether a timeline belongs to the entity: it is the key's subject or its object."""
    parts = json.loads(key)
    return bool(parts[0] == entity_id or (len(parts) > 2 and parts[2] == f"@{entity_id}"))


def _about(a: Assertion, entity_id: str, fact_ids: set[str]) -> bool:
    if a.kind == "retract":
        return a.fact_id in fact_ids
    c = a.claim
    return c is not None and entity_id in (c.subject, c.object)


def _names(delta_json: str, entity_id: str) -> bool:
    d = MemoryDelta.model_validate_json(delta_json)
    return entity_id in (d.subject, d.object)


@dataclass
class Plan:
    """What a forget saw when it began: the episodes mentioning the entity (with the
    timelines each asserted on), the fact ids on the entity's timelines, every timeline
    touched and what they held."""

    episodes: dict[str, frozenset[str]]
    timelines: dict[str, set[str]]
    keys: frozenset[str]
    before: Inventory
    deleted: int = 0  # episodes deleted since, by this forget
    candidates: int = 0  # review candidates deleted with them
    done: set[str] = field(default_factory=set)  # the entity's timelines batches cleared
    # The review candidates and merge candidates citing each episode, read once with the
    # plan: a batch deletes those of its episodes by id, where reading the tenant's
    # candidates in every batch would grow with all it ever held.
    held: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)

    def batches(self, limit: int) -> list[list[str]]:
        """The episodes in order, in runs of at most ``limit`` timelines (one episode
        alone when it asserted on more; one that asserted on none counts as one)."""
        out: list[list[str]] = []
        size = 0
        for ep, keys in sorted(self.episodes.items()):
            n = max(len(keys), 1)
            if not out or size + n > limit:
                out.append([])
                size = 0
            out[-1].append(ep)
            size += n
        return out


def begin(tx: EraseTx, *, tenant_id: str, entity_id: str) -> Plan:
    if not tx.entities(tenant_id=tenant_id, entity_ids={entity_id}):
        raise NotFoundError("entity", entity_id)
    episodes = {
        ep: tx.episode_timelines(tenant_id=tenant_id, episode_id=ep)
        for ep in tx.mentioning_episodes(tenant_id=tenant_id, entity_id=entity_id)
    }
    timelines = tx.entity_timelines(tenant_id=tenant_id, entity_id=entity_id)
    keys = frozenset(timelines).union(*episodes.values())
    held: dict[str, tuple[list[str], list[str]]] = {ep: ([], []) for ep in episodes}
    for c in tx.candidates(tenant_id=tenant_id):
        if c.episode_id in held:
            held[c.episode_id][0].append(c.candidate_id)
    for m in tx.merges(tenant_id=tenant_id):
        if m.episode_id in held:
            held[m.episode_id][1].append(m.candidate_id)
    return Plan(
        episodes={ep: frozenset(ks) for ep, ks in episodes.items()},
        timelines=timelines,
        keys=keys,
        before=tx.inventory(tenant_id=tenant_id, keys=sorted(keys)),
        held=held,
    )


def _deleting(
    plan: Plan, tenant_id: str, entity_id: str, episode_ids: Sequence[str]
) -> Callable[[EraseTx], Batch]:
    return lambda tx: delete_episodes(
        tx, plan, tenant_id=tenant_id, entity_id=entity_id, episode_ids=episode_ids
    )


@dataclass(frozen=True)
class Batch:
    episodes: int
    candidates: int
    cleared: frozenset[str]  # the entity's timelines it cleared


def delete_episodes(
    tx: EraseTx, plan: Plan, *, tenant_id: str, entity_id: str, episode_ids: Sequence[str]
) -> Batch:
    """One batch of a forget, in one transaction: first everything about the entity on
    the timelines these episodes asserted on (as :func:`finish` does for the rest), then
    the episodes, then the review candidates the plan saw citing them.

    In that order so that what a later run needs to find stays findable: once a batch
    has committed, no ledger entry about the entity is left on those timelines, and its
    versions on them go with the episodes or, at the end, with the entity. An episode
    deleted since the plan is skipped, and so is one that asserted on timelines the plan
    did not see for it (another episode posted under the id since)."""
    there = tx.episodes_occurred_at(tenant_id=tenant_id, episode_ids=set(episode_ids))
    episodes: list[str] = []
    touched: set[str] = set()
    for ep in sorted(there):
        keys = tx.episode_timelines(tenant_id=tenant_id, episode_id=ep)
        if keys <= plan.episodes.get(ep, frozenset()):
            episodes.append(ep)
            touched |= keys
    mine = {
        k: set(plan.timelines.get(k, ()))
        for k in touched
        if k in plan.timelines or is_own_key(k, entity_id)
    }
    own = _unlink(tx, tenant_id=tenant_id, entity_id=entity_id, timelines=mine)
    for ep in episodes:
        ledger.delete_episode(tx, tenant_id=tenant_id, episode_id=ep)
    # Their lock nodes name the entity; its versions there may be gone with the episodes
    # (a run after an interruption would no longer find these keys).
    tx.drop_timeline_locks(tenant_id=tenant_id, keys=own)
    candidate_ids = [c for ep in episodes for c in plan.held.get(ep, ([], []))[0]]
    merge_ids = [m for ep in episodes for m in plan.held.get(ep, ([], []))[1]]
    if candidate_ids or merge_ids:
        tx.delete_candidates(tenant_id=tenant_id, candidate_ids=candidate_ids, merge_ids=merge_ids)
    return Batch(
        episodes=len(episodes),
        candidates=len(candidate_ids) + len(merge_ids),
        cleared=frozenset(mine),
    )


def forget_entity(tx: EraseTx, *, tenant_id: str, entity_id: str, dry_run: bool) -> ForgetResult:
    """Erase an entity and everything about it in one transaction; see the module
    docstring."""
    plan = begin(tx, tenant_id=tenant_id, entity_id=entity_id)
    done = finish(tx, plan, tenant_id=tenant_id, entity_id=entity_id)
    after = tx.inventory(tenant_id=tenant_id, keys=sorted(done.keys))
    result = tally(plan, done, after, entity_id=entity_id, dry_run=dry_run)
    if dry_run:
        raise DryRun(result)
    return result


def finish(tx: EraseTx, plan: Plan, *, tenant_id: str, entity_id: str) -> Finished:
    """The rest of a forget after ``plan``: the episodes that mention the entity still
    (all of them, when nothing was deleted since the plan), then what is left about it.
    Leaves the count to :func:`tally`: the timelines' inventory afterwards is a read of
    every one of them, which a real forget does outside the write lock."""
    if not tx.entities(tenant_id=tenant_id, entity_ids={entity_id}):
        raise NotFoundError("entity", entity_id)
    episodes = sorted(tx.mentioning_episodes(tenant_id=tenant_id, entity_id=entity_id))
    touched = set(plan.keys)
    for ep in episodes:
        touched |= tx.episode_timelines(tenant_id=tenant_id, episode_id=ep)
    erased = set(episodes)

    for ep in episodes:
        ledger.delete_episode(tx, tenant_id=tenant_id, episode_id=ep)

    # What is left about the entity after its episodes went (data written without
    # mentions, retractions): dropped from the ledger, shared timelines repaired.
    # The fact ids seen before the episodes went still name its facts (retractions of
    # them may remain on shared timelines). The timelines a batch cleared hold none.
    remaining = tx.entity_timelines(tenant_id=tenant_id, entity_id=entity_id)
    timelines = {
        k: plan.timelines.get(k, set()) | remaining.get(k, set())
        for k in {*plan.timelines, *remaining}
        if k in remaining or k not in plan.done
    }
    own = _unlink(tx, tenant_id=tenant_id, entity_id=entity_id, timelines=timelines)
    own += sorted(k for k in plan.done if k not in timelines and is_own_key(k, entity_id))
    left = set(timelines)

    candidates = _drop_candidates(tx, tenant_id=tenant_id, erased=erased, entity_id=entity_id)
    tx.erase_entity(tenant_id=tenant_id, entity_id=entity_id, own_keys=own)
    return Finished(keys=frozenset(touched | left), episodes=len(episodes), candidates=candidates)


def _unlink(
    tx: EraseTx, *, tenant_id: str, entity_id: str, timelines: dict[str, set[str]]
) -> list[str]:
    """Drop the ledger entries about the entity from these of its timelines (with the
    fact ids of its facts on them): on its own timelines all of them, on a shared one
    those naming it and the retractions of its facts, that timeline then folded again
    and repaired. The entity's own timelines, which keep their versions until the
    entity goes."""
    left = sorted(timelines)
    if not left:
        return []
    fact_ids = set().union(*timelines.values())
    tx.lock_timelines(tenant_id=tenant_id, keys=left)
    ledgers = tx.assertions(tenant_id=tenant_id, keys=left)
    current = tx.current_versions(tenant_id=tenant_id, keys=left)
    own = [k for k in left if is_own_key(k, entity_id)]
    owned = set(own)  # a list's `in` made this loop quadratic: 0.5 s at 10,000 timelines
    doomed: list[tuple[str, int]] = []
    retire: list[str] = []
    inserts = []
    insert_keys: list[str] = []
    latest = [f.recorded_at for fs in current.values() for f in fs]
    now = CLOCK.now(after=max(latest) if latest else None)
    for k in left:
        entries = ledgers.get(k, [])
        if k in owned:
            doomed += [(k, a.seq) for a in entries]
            continue
        dropped = [a for a in entries if _about(a, entity_id, fact_ids)]
        if not dropped:
            continue
        doomed += [(k, a.seq) for a in dropped]
        kept = [a for a in entries if not _about(a, entity_id, fact_ids)]
        mutations = diff(
            [(f.version_id, ledger.interval_of(f)) for f in current.get(k, [])], fold(kept)
        )
        retire += mutations.retire
        for i in mutations.insert:
            if i.claim.object == entity_id or i.claim.subject == entity_id:
                continue  # never re-created: it is about to be erased
            inserts.append(ledger.fact_of(i, tenant_id=tenant_id, recorded_at=now))
            insert_keys.append(k)
    tx.delete_assertions(tenant_id=tenant_id, rows=doomed)
    tx.retire(tenant_id=tenant_id, version_ids=retire, at=now)
    tx.insert(tenant_id=tenant_id, facts=inserts, keys=insert_keys)
    return own


@dataclass(frozen=True)
class Finished:
    keys: frozenset[str]  # every timeline the forget touched
    episodes: int
    candidates: int


def tally(
    plan: Plan, done: Finished, after: Inventory, *, entity_id: str, dry_run: bool
) -> ForgetResult:
    """What went: the plan's timelines before, against every touched one after."""
    gone = plan.before.versions - after.versions
    still = {fid for _, fid in after.versions}
    return ForgetResult(
        entity_id=entity_id,
        dry_run=dry_run,
        entities=1,
        facts=len({fid for _, fid in gone} - still),
        versions=len(gone),
        assertions=max(plan.before.assertions - after.assertions, 0),
        episodes=plan.deleted + done.episodes,
        candidates=plan.candidates + done.candidates,
    )


def _drop_candidates(tx: EraseTx, *, tenant_id: str, erased: set[str], entity_id: str) -> int:
    """Delete the review candidates that cite an ``erased`` episode or name the entity;
    how many."""
    held = [
        c
        for c in tx.candidates(tenant_id=tenant_id)
        if c.episode_id in erased or _names(c.delta_json, entity_id)
    ]
    merges = [
        m
        for m in tx.merges(tenant_id=tenant_id)
        if m.episode_id in erased or entity_id in (m.entity_id, m.existing_entity_id)
    ]
    if held or merges:
        tx.delete_candidates(
            tenant_id=tenant_id,
            candidate_ids=[c.candidate_id for c in held],
            merge_ids=[m.candidate_id for m in merges],
        )
    return len(held) + len(merges)


__all__ = [
    "TIMELINES_PER_TX",
    "Batch",
    "DryRun",
    "ErasableStore",
    "EraseOps",
    "EraseReads",
    "EraseTx",
    "Finished",
    "ForgetResult",
    "HeldCandidate",
    "HeldMerge",
    "Inventory",
    "Plan",
    "Preview",
    "begin",
    "delete_episodes",
    "erasable",
    "finish",
    "forget",
    "forget_entity",
    "in_erase_transaction",
    "is_own_key",
    "preview",
    "tally",
]
