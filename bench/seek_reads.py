"""Reads that sought a whole tenant on SQLite, timed on a large file.

    .venv/bin/python bench/seek_reads.py /tmp/audit-1m.db --tenant lat-1000000 \\
        --episode ep-50000 --object company-1659 --entity company-1659 --runs 5

Times, median of ``--runs`` each: the facts citing one episode (``GET
/episodes/{id}/facts``), the facts naming one entity as object (the incoming half of
``GET /entities/{id}``, ``GET /facts?object=``), and a dry run of forgetting an entity
(``POST /entities/{id}/forget?dry_run=true``: a write transaction, rolled back). The
dry run writes nothing that stays, but takes the file's writer lock: run it on a copy.

``--lists`` times the paged lists instead (``GET /facts?predicate=``, the entity catalog
of one type, the review lists), each a page of ``--page``. The file of "Scale" has no
rare predicate and no review candidates: ``--rare N`` first writes N facts of the
predicate ``bench_rare`` (one per ``--rare-every``-th person, so the predicate's facts
are spread over the tenant's subjects) and ``--candidates N`` N held candidates (one in
ten pending, the rest rejected), when the file does not hold them yet. Both write: run
them on a copy, with the code whose layout the copy is to keep (a file opened by newer
code gets its indexes and is refused by older code).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from graph.erasure import forget
from graph.model import FactQuery, MemoryDelta
from graph.queue import CandidateStatus, HoldReason, PendingCandidate
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore
from graph.timeutil import utcnow

RARE = "bench_rare"


def timed(fn: Callable[[], object], runs: int) -> float:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


def write_rare(svc: MemoryService, tenant: str, n: int, every: int) -> None:
    """N facts of the predicate RARE, on person-0, person-{every}, …, in batches."""
    have = svc.store.facts(
        tenant_id=tenant, query=FactQuery(predicate=RARE, as_of=None, known_at=utcnow(), limit=1)
    )
    if have:
        return
    at = datetime(2024, 1, 1, tzinfo=UTC)
    deltas = [
        MemoryDelta(
            subject=f"person-{i * every}",
            predicate=RARE,
            value=i,
            valid_from=at,
            source_episode_id=f"ep-{i * every}",  # the person's episode in the file of "Scale"
        )
        for i in range(n)
    ]
    for i in range(0, n, 1000):
        svc.write_facts(tenant_id=tenant, deltas=deltas[i : i + 1000])


def hold_candidates(store: SqliteStore, tenant: str, n: int) -> None:
    """N held candidates of one episode each; one in ten pending, the rest rejected."""
    q = store.queue
    if q.candidates(tenant_id=tenant, status=None, episode_id=None, limit=1):
        return
    start = utcnow() - timedelta(days=30)
    for i in range(n):
        q.hold_candidate(
            candidate=PendingCandidate(
                tenant_id=tenant,
                candidate_id=f"bench-k-{i}",
                episode_id=f"ep-{i % 100_000}",
                statement_key=f"bench|{i}",
                reason=HoldReason.CONFIRMATION,
                delta=MemoryDelta(subject=f"person-{i}", predicate="shoe_size", value=40),
                status=CandidateStatus.PENDING if i % 10 == 0 else CandidateStatus.REJECTED,
                created_at=start + timedelta(seconds=i),
            )
        )


def list_cases(
    svc: MemoryService, store: SqliteStore, tenant: str, page: int, entity_type: str
) -> dict[str, Callable[[], object]]:
    now = utcnow()
    facts = svc.store.facts

    def by_predicate(predicate: str, after: tuple[str, str, str] | None = None) -> object:
        q = FactQuery(predicate=predicate, as_of=now, known_at=now, limit=page, after=after)
        return facts(tenant_id=tenant, query=q)

    def middle(predicate: str) -> tuple[str, str, str]:
        """The cursor after the page that starts half way through the predicate's facts."""
        q = FactQuery(predicate=predicate, as_of=now, known_at=now, limit=100_000)
        mid = facts(tenant_id=tenant, query=q)
        f = mid[len(mid) // 2]
        return (f.subject, f.predicate, f.fact_id)

    rare_mid, common_mid = middle(RARE), middle("shoe_size")
    catalog = store.queue.entity_catalog
    first = catalog(tenant_id=tenant, entity_types={entity_type}, limit=page)
    last = (first[-1].created_at, first[-1].entity_id) if first else None
    every_type = catalog(tenant_id=tenant, entity_types=None, limit=page)
    q = store.queue
    return {
        f"facts ?predicate={RARE}, first page": lambda: by_predicate(RARE),
        f"facts ?predicate={RARE}, a middle page": lambda: by_predicate(RARE, rare_mid),
        "facts ?predicate=shoe_size, first page": lambda: by_predicate("shoe_size"),
        "facts ?predicate=shoe_size, a middle page": lambda: by_predicate("shoe_size", common_mid),
        f"entity catalog of {entity_type}, first page": lambda: catalog(
            tenant_id=tenant, entity_types={entity_type}, limit=page
        ),
        f"entity catalog of {entity_type}, second page": lambda: catalog(
            tenant_id=tenant, entity_types={entity_type}, limit=page, after=last
        ),
        "entity catalog, every type, second page": lambda: catalog(
            tenant_id=tenant,
            entity_types=None,
            limit=page,
            after=(every_type[-1].created_at, every_type[-1].entity_id),
        ),
        "review list, no status": lambda: q.candidates(
            tenant_id=tenant, status=None, episode_id=None, limit=page
        ),
        "review list, pending": lambda: q.candidates(
            tenant_id=tenant, status=CandidateStatus.PENDING, episode_id=None, limit=page
        ),
        "review list, one episode": lambda: q.candidates(
            tenant_id=tenant, status=None, episode_id="ep-77", limit=page
        ),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("path")
    ap.add_argument("--tenant", required=True)
    ap.add_argument("--episode")
    ap.add_argument("--object")
    ap.add_argument("--entity")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lists", action="store_true", help="time the paged lists")
    ap.add_argument("--page", type=int, default=100)
    ap.add_argument("--entity-type", default="Company")
    ap.add_argument("--rare", type=int, default=0, help=f"write N facts of {RARE} first")
    ap.add_argument("--rare-every", type=int, default=1000)
    ap.add_argument("--candidates", type=int, default=0, help="hold N candidates first")
    a = ap.parse_args()
    store = SqliteStore(a.path)
    started = time.perf_counter()
    store.init()
    print(f"open: {(time.perf_counter() - started) * 1000:.0f} ms")
    svc = MemoryService(store)
    if a.lists:
        write_rare(svc, a.tenant, a.rare, a.rare_every)
        hold_candidates(store, a.tenant, a.candidates)
        cases = list_cases(svc, store, a.tenant, a.page, a.entity_type)
    else:
        if not (a.episode and a.object and a.entity):
            ap.error("--episode, --object and --entity (or --lists)")
        cases = {
            "episode facts": lambda: svc.episode_facts(tenant_id=a.tenant, episode_id=a.episode),
            "facts by object": lambda: svc.facts(tenant_id=a.tenant, object=a.object),
            "forget (dry run)": lambda: forget(
                store, tenant_id=a.tenant, entity_id=a.entity, dry_run=True
            ),
        }
    for name, fn in cases.items():
        fn()  # warm: the pages it reads in the cache
        print(f"{name}: {timed(fn, a.runs):.2f} ms")
    store.close()


if __name__ == "__main__":
    main()
