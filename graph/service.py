"""The service layer: what the API, the replay runner and the extraction worker call.

It owns defaults (now, the tenant's schema) and transactions; the decisions themselves
are in :mod:`graph.ledger` and :mod:`graph.temporal`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from graph import ledger
from graph.errors import (
    LeaseLostError,
    NotFoundError,
    TransientStoreError,
    ValidationError,
    invalid,
)
from graph.model import (
    ConflictPolicy,
    DeleteResult,
    Direction,
    Entity,
    Episode,
    EpisodeCreate,
    EpisodeStatus,
    Fact,
    FactQuery,
    MemoryDelta,
    Neighborhood,
    WriteResult,
    canonical_value,
    new_id,
)
from graph.port import LedgerTx, Store
from graph.schema import PERMISSIVE, MemorySchema, reserved_type_errors
from graph.timeutil import utcnow
from graph.tracing import traced

MAX_DEPTH = 4
MAX_LIMIT = 1000
# A neighbourhood answers at most this many facts; past it (or past the caller's own
# smaller limit) it is a 422, never a silent cut.
MAX_NEIGHBORHOOD = 1000
TX_ATTEMPTS = 5
_AFTER_EVERY_ID = "\U0010ffff"

Keyset = tuple[str, str, str]  # (subject, predicate, fact_id) of the last row of a page


@dataclass(frozen=True)
class EntityPage:
    """One page of the facts about an entity: as subject first, then as object."""

    entity: Entity
    facts: list[Fact]
    # Where the next page starts: (incoming, keyset), None when this page is the last.
    next: tuple[bool, Keyset | None] | None


T = TypeVar("T")
TENANT = {"tenant_id": "sgam.tenant"}  # span attribute of each service call


class MemoryService:
    def __init__(self, store: Store) -> None:
        self.store = store

    def in_transaction(self, work: Callable[[LedgerTx], T]) -> T:
        """Run ``work`` in one store transaction, again from the start on a transient error.

        The ledger reads everything it decides on inside the transaction, so a retry
        decides afresh against what the competing writer committed.
        """
        for attempt in range(1, TX_ATTEMPTS + 1):
            try:
                with self.store.transaction() as tx:
                    return work(tx)
            except TransientStoreError:
                if attempt == TX_ATTEMPTS:
                    raise
                time.sleep(0.02 * 2**attempt)
        raise AssertionError("unreachable")

    # -- schema ------------------------------------------------------------------------
    @traced("memory.schema", args=TENANT)
    def schema(self, *, tenant_id: str) -> MemorySchema:
        return self.store.get_schema(tenant_id=tenant_id) or PERMISSIVE

    @traced("memory.put_schema", args=TENANT)
    def put_schema(self, *, tenant_id: str, schema: MemorySchema) -> MemorySchema:
        if errors := reserved_type_errors(schema):
            raise ValidationError(errors)
        return self.store.put_schema(tenant_id=tenant_id, schema=schema)

    # -- episodes ----------------------------------------------------------------------
    @traced("memory.add_episode", args=TENANT)
    def add_episode(
        self, *, tenant_id: str, body: EpisodeCreate, status: EpisodeStatus = EpisodeStatus.STORED
    ) -> tuple[Episode, bool]:
        """Capture the raw episode first; extraction, if any, comes after. The facts the
        body carries are not written here: see :meth:`capture`."""
        return self.store.put_episode(episode=_new_episode(tenant_id, body, status))

    @traced("memory.capture", args=TENANT)
    def capture(
        self,
        *,
        tenant_id: str,
        body: EpisodeCreate,
        status: EpisodeStatus = EpisodeStatus.STORED,
        policy: ConflictPolicy = ConflictPolicy.REJECT,
        needs_model: bool | None = None,
    ) -> tuple[Episode, bool, WriteResult]:
        """Store an episode and the facts it carries in ONE transaction: both or neither,
        whatever fails (a refused fact, a store error, a crash). Sent again (same id and
        content), the episode is found and its facts are written again: the ledger makes
        those already there unchanged, so a retry after a failure writes what was lost
        instead of answering ``created: false`` without them."""
        episode = _new_episode(tenant_id, body, status).model_copy(
            update={"needs_model": needs_model}  # which workers may claim it
        )
        schema = self.schema(tenant_id=tenant_id) if body.facts else PERMISSIVE

        def work(tx: LedgerTx) -> tuple[Episode, bool, WriteResult]:
            stored, created = tx.put_episode(episode=episode)
            if not body.facts:
                return stored, created, WriteResult(facts=[], outcomes=[])
            deltas = [
                d.model_copy(
                    update={
                        "source_episode_id": d.source_episode_id or stored.episode_id,
                        "valid_from": d.valid_from or stored.occurred_at,
                    }
                )
                for d in body.facts
            ]
            if not created and _recorded_before(tx, tenant_id, stored.episode_id, deltas):
                # An identical redelivery: its facts are in the ledger, even those later
                # superseded or corrected, which writing them again would resurrect.
                return stored, created, WriteResult(facts=[], outcomes=[])
            result = ledger.write_facts(
                tx, tenant_id=tenant_id, schema=schema, deltas=deltas, policy=policy
            )
            return stored, created, result

        return self.in_transaction(work)

    @traced("memory.get_episode", args=TENANT)
    def get_episode(self, *, tenant_id: str, episode_id: str) -> Episode:
        ep = self.store.get_episode(tenant_id=tenant_id, episode_id=episode_id)
        if ep is None:
            raise NotFoundError("episode", episode_id)
        return ep

    @traced("memory.episode_facts", args=TENANT)
    def episode_facts(self, *, tenant_id: str, episode_id: str) -> list[Fact]:
        """Every fact interval currently believed that cites this episode."""
        known_at = utcnow()
        facts, more = self.episode_facts_page(
            tenant_id=tenant_id, episode_id=episode_id, known_at=known_at
        )
        while more:
            last = facts[-1]
            page, more = self.episode_facts_page(
                tenant_id=tenant_id,
                episode_id=episode_id,
                known_at=known_at,
                after=_keyset(last),
            )
            facts += page
        return facts

    @traced("memory.episode_facts_page", args=TENANT)
    def episode_facts_page(
        self,
        *,
        tenant_id: str,
        episode_id: str,
        known_at: datetime | None = None,
        limit: int = MAX_LIMIT,
        after: Keyset | None = None,
    ) -> tuple[list[Fact], bool]:
        """The fact intervals believed at ``known_at`` (now) that cite this episode, a
        page of at most ``limit`` in (subject, predicate, fact_id) order, and whether
        more follow."""
        q = FactQuery(
            source_episode_id=episode_id,
            as_of=None,
            known_at=known_at or utcnow(),
            limit=_checked(limit) + 1,
            after=after,
        )
        rows = self.store.facts(tenant_id=tenant_id, query=q)
        return rows[:limit], len(rows) > limit

    @traced("memory.delete_episode", args=TENANT)
    def delete_episode(self, *, tenant_id: str, episode_id: str) -> DeleteResult:
        return self.in_transaction(
            lambda tx: ledger.delete_episode(tx, tenant_id=tenant_id, episode_id=episode_id)
        )

    # -- writes ------------------------------------------------------------------------
    @traced("memory.write_facts", args=TENANT)
    def write_facts(
        self,
        *,
        tenant_id: str,
        deltas: Sequence[MemoryDelta],
        policy: ConflictPolicy = ConflictPolicy.REJECT,
        schema: MemorySchema | None = None,
        lease: tuple[str, str] | None = None,
    ) -> WriteResult:
        """Write a batch; with ``lease`` (episode id, owner), only while that extraction
        worker still holds the episode's lease, checked inside the same transaction."""
        schema = schema or self.schema(tenant_id=tenant_id)
        checked_schema = schema

        def work(tx: LedgerTx) -> WriteResult:
            if lease is not None and not tx.holds_lease(
                tenant_id=tenant_id, episode_id=lease[0], owner=lease[1]
            ):
                raise LeaseLostError(*lease)
            return ledger.write_facts(
                tx, tenant_id=tenant_id, schema=checked_schema, deltas=deltas, policy=policy
            )

        return self.in_transaction(work)

    @traced("memory.retract", args=TENANT)
    def retract(self, *, tenant_id: str, fact_id: str, valid_to: datetime | None = None) -> Fact:
        return self.in_transaction(
            lambda tx: ledger.retract_fact(
                tx, tenant_id=tenant_id, fact_id=fact_id, valid_to=valid_to
            )
        )

    # -- reads -------------------------------------------------------------------------
    @traced("memory.facts", args=TENANT)
    def facts(
        self,
        *,
        tenant_id: str,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        memory_type: str | None = None,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        limit: int = 100,
        after: tuple[str, str, str] | None = None,
    ) -> list[Fact]:
        if not 1 <= limit <= MAX_LIMIT:
            raise invalid(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
        now = utcnow()
        q = FactQuery(
            subject=subject,
            predicate=predicate,
            object=object,
            memory_type=memory_type,
            as_of=as_of or now,
            known_at=known_at or now,
            limit=limit,
            after=after,
        )
        return self.store.facts(tenant_id=tenant_id, query=q)

    @traced("memory.history", args=TENANT)
    def history(
        self,
        *,
        tenant_id: str,
        subject: str,
        predicate: str,
        object: str | None = None,
        known_at: datetime | None = None,
        limit: int | None = None,
        after: tuple[datetime, str] | None = None,
    ) -> list[Fact]:
        """Every version of the timeline known at ``known_at``, by (valid_from, fact_id);
        with ``limit``, at most that many after the keyset position ``after``."""
        if limit is not None and limit < 1:
            raise invalid("limit must be at least 1", field="limit")
        return self.store.history(
            tenant_id=tenant_id,
            subject=subject,
            predicate=predicate,
            object=object,
            known_at=known_at or utcnow(),
            limit=limit,
            after=after,
        )

    @traced("memory.predicates", args=TENANT)
    def predicates(
        self,
        *,
        tenant_id: str,
        subject: str,
        known_at: datetime | None = None,
        limit: int = 100,
        after: str | None = None,
    ) -> tuple[list[str], bool]:
        """The predicates ``subject`` has had facts for at any valid time, as known at
        ``known_at``, in name order after ``after``, and whether more follow: what a
        timeline view must draw, including timelines not valid now (ended, retracted,
        not yet begun).

        One keyset step per predicate (``limit=1`` reads that skip the rest of the last
        predicate's versions), so the cost grows with the predicates, not the versions.
        """
        if not 1 <= limit <= MAX_LIMIT:
            raise invalid(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
        if self.store.entity(tenant_id=tenant_id, entity_id=subject) is None:
            raise NotFoundError("entity", subject)
        known = known_at or utcnow()
        found: list[str] = []
        last = after
        while len(found) <= limit:  # one more than asked: do more follow?
            # Fact ids are ASCII, so (subject, last, U+10FFFF) sorts after every version
            # of predicate ``last``: the next row is the next predicate's first version.
            skip = (subject, last, _AFTER_EVERY_ID) if last is not None else None
            q = FactQuery(subject=subject, as_of=None, known_at=known, limit=1, after=skip)
            rows = self.store.facts(tenant_id=tenant_id, query=q)
            if not rows:
                break
            last = rows[0].predicate
            found.append(last)
        return found[:limit], len(found) > limit

    @traced("memory.entity", args=TENANT)
    def entity(
        self,
        *,
        tenant_id: str,
        entity_id: str,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
    ) -> tuple[Entity, list[Fact]]:
        """The entity and every fact about it (as subject or object) valid at ``as_of``."""
        now = utcnow()
        page = self.entity_page(
            tenant_id=tenant_id, entity_id=entity_id, as_of=as_of or now, known_at=known_at or now
        )
        facts = list(page.facts)
        while page.next is not None:
            incoming, after = page.next
            page = self.entity_page(
                tenant_id=tenant_id,
                entity_id=entity_id,
                as_of=as_of or now,
                known_at=known_at or now,
                incoming=incoming,
                after=after,
            )
            facts += page.facts
        return page.entity, facts

    @traced("memory.entity_page", args=TENANT)
    def entity_page(
        self,
        *,
        tenant_id: str,
        entity_id: str,
        as_of: datetime,
        known_at: datetime,
        limit: int = MAX_LIMIT,
        incoming: bool = False,
        after: Keyset | None = None,
    ) -> EntityPage:
        """A page of the facts about an entity valid at ``as_of``: those it is the subject
        of, then those it is the object of (a fact about itself is listed once)."""
        ent = self.store.entity(tenant_id=tenant_id, entity_id=entity_id)
        if ent is None:
            raise NotFoundError("entity", entity_id)
        _checked(limit)

        def read(*, by_object: bool, start: Keyset | None, n: int) -> list[Fact]:
            q = FactQuery(
                subject=None if by_object else entity_id,
                object=entity_id if by_object else None,
                as_of=as_of,
                known_at=known_at,
                limit=n,
                after=start,
            )
            return self.store.facts(tenant_id=tenant_id, query=q)

        facts: list[Fact] = []
        if not incoming:
            rows = read(by_object=False, start=after, n=limit + 1)
            if len(rows) > limit:
                last = rows[limit - 1]
                return EntityPage(ent, rows[:limit], (False, _keyset(last)))
            facts, after = rows, None
        room = limit - len(facts)
        rows = read(by_object=True, start=after, n=room + 1)
        taken = rows[:room]
        facts += [f for f in taken if f.subject != entity_id]  # listed as subject already
        if len(rows) > room:
            return EntityPage(ent, facts, (True, _keyset(taken[-1]) if taken else after))
        return EntityPage(ent, facts, None)

    @traced("memory.neighbors", args=TENANT)
    def neighbors(
        self,
        *,
        tenant_id: str,
        entity_id: str,
        depth: int = 1,
        predicates: Sequence[str] | None = None,
        direction: Direction = Direction.BOTH,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        limit: int = MAX_NEIGHBORHOOD,
    ) -> Neighborhood:
        """The subgraph within ``depth`` hops; more than ``limit`` facts is a 422."""
        if not 1 <= depth <= MAX_DEPTH:
            raise invalid(f"depth must be between 1 and {MAX_DEPTH}", field="depth")
        if not 1 <= limit <= MAX_NEIGHBORHOOD:
            raise invalid(f"limit must be between 1 and {MAX_NEIGHBORHOOD}", field="limit")
        if self.store.entity(tenant_id=tenant_id, entity_id=entity_id) is None:
            raise NotFoundError("entity", entity_id)
        now = utcnow()
        return self.store.neighbors(
            tenant_id=tenant_id,
            entity_id=entity_id,
            depth=depth,
            predicates=predicates,
            direction=direction,
            as_of=as_of or now,
            known_at=known_at or now,
            limit=limit,
        )


def _new_episode(tenant_id: str, body: EpisodeCreate, status: EpisodeStatus) -> Episode:
    return Episode(
        tenant_id=tenant_id,
        episode_id=body.episode_id or new_id("ep"),
        kind=body.kind,
        source=body.source,
        content=body.content,
        content_hash="",
        occurred_at=body.occurred_at,
        session_id=body.session_id,
        metadata=body.metadata,
        recorded_at=utcnow(),
        status=status,
    )


def _checked(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise invalid(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
    return limit


def _keyset(f: Fact) -> Keyset:
    return (f.subject, f.predicate, f.fact_id)


def _recorded_before(
    tx: LedgerTx, tenant_id: str, episode_id: str, deltas: Sequence[MemoryDelta]
) -> bool:
    """Whether the ledger holds an assertion of this episode for every delta (same
    statement, same bounds): what an earlier delivery of the episode wrote."""
    keys = sorted(tx.episode_timelines(tenant_id=tenant_id, episode_id=episode_id))
    if not keys:
        return False
    said = {
        (
            a.claim.subject,
            a.claim.predicate,
            canonical_value(a.claim.value),
            a.claim.object,
            a.valid_from,
            a.valid_to,
        )
        for rows in tx.assertions(tenant_id=tenant_id, keys=keys).values()
        for a in rows
        if a.kind == "assert" and a.claim is not None and a.source_episode_id == episode_id
    }
    return all(
        (d.subject, d.predicate, canonical_value(d.value), d.object, d.valid_from, d.valid_to)
        in said
        for d in deltas
    )
