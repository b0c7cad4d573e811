"""Retention that happens: a purge pass hard-deletes what a tenant's schema no longer keeps.

- A predicate's ``retention`` is ``keep``, a label of your own (kept like ``keep``), or
  an ISO-8601 duration such as ``P30D``: a fact version of that predicate whose validity
  ended (``valid_to``) longer ago than that is deleted, at every system time, together
  with the ledger entries of a fact that is gone entirely. A fact whose ledger entries
  other facts still depend on (a later fact inherited its end, a bounded write cut it
  into pieces that are still current) stays until those have ended too: deleting it
  must never change what is believed about anything else.
- The schema's ``episode_retention`` (``keep`` or a duration) deletes episodes that
  occurred longer ago than that, exactly as ``DELETE /episodes/{id}`` does, repairing the
  intervals they had cut.

The pass takes ``now`` from the caller (the server's purger and ``sgam purge`` pass the
wall clock; tests pass any instant), so it is tested with a controllable clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import cast

from pydantic import BaseModel

from graph import ledger
from graph.durations import retention_duration
from graph.erasure import DryRun, ErasableStore, EraseTx, in_erase_transaction
from graph.schema import MemorySchema
from graph.temporal import Interval, fold

# Timelines per transaction, and episodes per transaction, in a real (not dry) run.
TIMELINE_BATCH = 200
EPISODE_BATCH = 200


class PurgeResult(BaseModel):
    """What a purge pass deleted in one tenant (or, in a dry run, would delete)."""

    tenant_id: str
    dry_run: bool
    facts: int = 0
    versions: int = 0
    assertions: int = 0
    episodes: int = 0

    def add(self, other: PurgeResult) -> PurgeResult:
        return self.model_copy(
            update={
                "facts": self.facts + other.facts,
                "versions": self.versions + other.versions,
                "assertions": self.assertions + other.assertions,
                "episodes": self.episodes + other.episodes,
            }
        )


def _same(a: Sequence[Interval], b: Sequence[Interval]) -> bool:
    """The same intervals, whatever they record as superseded: a fact that superseded a
    purged one still holds exactly what it held."""

    def key(i: Interval) -> tuple[str, datetime, datetime | None, object, tuple[str, ...]]:
        return (i.fact_id, i.valid_from, i.valid_to, i.claim, i.sources)

    return sorted(map(key, a), key=str) == sorted(map(key, b), key=str)


def _purgeable(
    tx: EraseTx, *, tenant_id: str, keys: Sequence[str], cutoff: datetime
) -> list[tuple[str, str]]:
    """The (timeline key, fact id) pairs that can go whole: their current interval ended
    before ``cutoff``, and folding the ledger without them leaves every other interval
    exactly as it is."""
    current = tx.current_versions(tenant_id=tenant_id, keys=keys)
    ledgers = tx.assertions(tenant_id=tenant_id, keys=keys)
    out: list[tuple[str, str]] = []
    for k in keys:
        expired = sorted(
            {
                f.fact_id
                for f in current.get(k, [])
                if f.valid_to is not None and f.valid_to < cutoff
            }
        )
        if not expired:
            continue
        entries = ledgers.get(k, [])
        whole = fold(entries)

        def keeps_the_rest(ids: set[str], entries: list = entries, whole: tuple = whole) -> bool:  # type: ignore[type-arg]
            kept = [a for a in entries if a.fact_id not in ids]
            return _same(fold(kept), [i for i in whole if i.fact_id not in ids])

        chosen: set[str] = set(expired)
        if not keeps_the_rest(chosen):
            chosen = set()
            for fid in expired:  # one at a time: what can go without changing the rest
                if keeps_the_rest(chosen | {fid}):
                    chosen.add(fid)
        out += [(k, fid) for fid in sorted(chosen)]
    return out


def _counted(
    tx: EraseTx, *, tenant_id: str, keys: Sequence[str], work: Callable[[], int]
) -> PurgeResult:
    before = tx.inventory(tenant_id=tenant_id, keys=keys)
    episodes = work()
    after = tx.inventory(tenant_id=tenant_id, keys=keys)
    gone = before.versions - after.versions
    still = {fid for _, fid in after.versions}
    return PurgeResult(
        tenant_id=tenant_id,
        dry_run=False,
        facts=len({fid for _, fid in gone} - still),
        versions=len(gone),
        assertions=max(before.assertions - after.assertions, 0),
        episodes=episodes,
    )


def purge_facts(
    tx: EraseTx, *, tenant_id: str, predicate: str, keys: Sequence[str], cutoff: datetime
) -> PurgeResult:
    """Purge these timelines of one predicate (inside ``tx``)."""
    tx.lock_timelines(tenant_id=tenant_id, keys=keys)

    def work() -> int:
        facts = _purgeable(tx, tenant_id=tenant_id, keys=keys, cutoff=cutoff)
        tx.purge_versions(tenant_id=tenant_id, keys=keys, before=cutoff, facts=facts)
        return 0

    return _counted(tx, tenant_id=tenant_id, keys=keys, work=work)


def purge_episodes(tx: EraseTx, *, tenant_id: str, episode_ids: Sequence[str]) -> PurgeResult:
    """Delete these episodes as episode deletion does (inside ``tx``)."""
    keys: set[str] = set()
    for ep in episode_ids:
        keys |= tx.episode_timelines(tenant_id=tenant_id, episode_id=ep)

    def work() -> int:
        for ep in episode_ids:
            ledger.delete_episode(tx, tenant_id=tenant_id, episode_id=ep)
        return len(episode_ids)

    return _counted(tx, tenant_id=tenant_id, keys=sorted(keys), work=work)


def _plan(
    store: ErasableStore, *, tenant_id: str, schema: MemorySchema, now: datetime
) -> list[tuple[str, datetime, list[str]]]:
    """(predicate, cutoff, expired timeline keys) of every predicate with a duration, read
    from a snapshot outside any write transaction: each batch re-reads its timelines under
    their lock, so a plan gone stale deletes nothing it should not."""
    plan = []
    for spec in schema.predicates:
        d = retention_duration(spec.retention)
        if d is not None:
            cutoff = d.before(now)
            keys = store.expired_timelines(tenant_id=tenant_id, predicate=spec.name, before=cutoff)
            if keys:
                plan.append((spec.name, cutoff, keys))
    return plan


def _everything(
    tx: EraseTx,
    *,
    tenant_id: str,
    schema: MemorySchema,
    now: datetime,
    plan: Sequence[tuple[str, datetime, list[str]]],
) -> PurgeResult:
    """The whole purge of a tenant in one transaction (a dry run), after ``plan``."""
    total = PurgeResult(tenant_id=tenant_id, dry_run=True)
    for name, cutoff, keys in plan:
        total = total.add(
            purge_facts(tx, tenant_id=tenant_id, predicate=name, keys=keys, cutoff=cutoff)
        )
    d = retention_duration(schema.episode_retention)
    if d is not None:
        eps = tx.episodes_before(tenant_id=tenant_id, before=d.before(now), limit=2**62)
        if eps:
            total = total.add(purge_episodes(tx, tenant_id=tenant_id, episode_ids=eps))
    return total


def purge_tenant(
    store: ErasableStore,
    *,
    tenant_id: str,
    schema: MemorySchema,
    now: datetime,
    dry_run: bool = False,
) -> PurgeResult:
    """Purge one tenant by its schema as of ``now``. A dry run does it all in one
    transaction and rolls it back; a real run goes in bounded transactions (at most
    :data:`TIMELINE_BATCH` timelines or :data:`EPISODE_BATCH` episodes each). Both plan
    first, outside any write transaction: the plan scans the tenant's versions, and on
    SQLite a write transaction holds every tenant's writes for as long as it lasts."""
    plan = _plan(store, tenant_id=tenant_id, schema=schema, now=now)
    if dry_run:

        def preview(tx: EraseTx) -> PurgeResult:
            raise DryRun(_everything(tx, tenant_id=tenant_id, schema=schema, now=now, plan=plan))

        try:
            return in_erase_transaction(store, preview)
        except DryRun as done:
            return cast(PurgeResult, done.result)
    total = PurgeResult(tenant_id=tenant_id, dry_run=False)
    for name, cutoff, keys in plan:
        for i in range(0, len(keys), TIMELINE_BATCH):
            chunk = keys[i : i + TIMELINE_BATCH]
            total = total.add(
                in_erase_transaction(
                    store,
                    lambda tx, chunk=chunk, name=name, cutoff=cutoff: purge_facts(  # type: ignore[misc]
                        tx, tenant_id=tenant_id, predicate=name, keys=chunk, cutoff=cutoff
                    ),
                )
            )
    d = retention_duration(schema.episode_retention)
    if d is not None:
        before = d.before(now)

        def batch(tx: EraseTx) -> PurgeResult:
            eps = tx.episodes_before(tenant_id=tenant_id, before=before, limit=EPISODE_BATCH)
            return purge_episodes(tx, tenant_id=tenant_id, episode_ids=eps)

        while True:
            result = in_erase_transaction(store, batch)
            total = total.add(result)
            if result.episodes < EPISODE_BATCH:
                break
    return total


def purge(
    store: ErasableStore,
    *,
    schema_of: Callable[[str], MemorySchema | None],
    now: datetime,
    tenant_id: str | None = None,
    dry_run: bool = False,
) -> list[PurgeResult]:
    """Purge every tenant with a schema (or one tenant), as of ``now``."""
    tenants = (
        [tenant_id]
        if tenant_id is not None
        else in_erase_transaction(store, lambda tx: tx.retention_tenants())
    )
    out: list[PurgeResult] = []
    for t in tenants:
        schema = schema_of(t)
        if schema is None:
            out.append(PurgeResult(tenant_id=t, dry_run=dry_run))
            continue
        out.append(purge_tenant(store, tenant_id=t, schema=schema, now=now, dry_run=dry_run))
    return out


class Purger:
    """The server's periodic purge: a daemon thread running :func:`purge` every
    ``interval`` seconds with the wall clock (``clock``, replaceable in tests)."""

    def __init__(
        self,
        store: ErasableStore,
        *,
        schema_of: Callable[[str], MemorySchema | None],
        interval: float,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        on_error: Callable[[Exception], None] = lambda e: None,
    ) -> None:
        self._store = store
        self._schema_of = schema_of
        self._interval = interval
        self._clock = clock
        self._on_error = on_error
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sgam-purger", daemon=True)
        self.passes = 0

    def start(self) -> Purger:
        self._thread.start()
        return self

    def _run(self) -> None:
        # The first pass comes one interval after start: a server starting (or a test
        # building an app) does not scan every tenant at once.
        while not self._stop.wait(self._interval):
            try:
                purge(self._store, schema_of=self._schema_of, now=self._clock())
            except Exception as e:  # a failed pass is tried again next interval
                self._on_error(e)
            self.passes += 1

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


__all__ = [
    "EPISODE_BATCH",
    "TIMELINE_BATCH",
    "PurgeResult",
    "Purger",
    "purge",
    "purge_episodes",
    "purge_facts",
    "purge_tenant",
]
