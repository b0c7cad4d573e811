"""The extraction queue's claim against a backlog (not part of the test run).

Fills the store with ``--n`` due pending episodes spread round robin over ``--tenants``
tenants (``bqc0``, ``bqc1``, ...), each stored through ``MemoryService.add_episode`` with
status ``pending`` (what a capture with background extraction or ``sgam import`` of
unextracted episodes leaves behind), then times ``--claims`` calls of
``store.queue.claim()`` across all tenants (the fair round robin, as a worker without a
tenant makes them) and prints p50/p95 in milliseconds. The claimed episodes are put back
as they were (pending, due at their original instant) afterwards, so the same data serves
every later run: the fill only adds what is missing, and a larger ``--n`` grows it. The
bench's tenants must be the only ones with pending work in that store (claims span all
tenants): use a store of its own.

    PYTHONPATH=$PWD HF_HUB_OFFLINE=1 .venv/bin/python bench/queue_claim.py \
        --store sqlite:///.sgam/bench/queue_claim.db --n 10000 [--tenants 5] [--claims 200]
        [--fill-threads 4]
        [--scoped]       # claims of one tenant (tenant_id given) instead of all
        [--nothing-due]  # idle polls while every episode waits (claims asked a year early)
        [--purge]        # delete the bench's tenants and stop

Against Neo4j, ``--store bolt://127.0.0.1:PORT`` of a private server (see bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# PYTHONPATH picks the code under test (e.g. main's, for a baseline); else this checkout's.
if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(ROOT))

from graph.model import Episode, EpisodeCreate, EpisodeStatus  # noqa: E402
from graph.port import Store  # noqa: E402
from graph.service import MemoryService  # noqa: E402
from graph.stores import open_store  # noqa: E402
from graph.timeutil import utcnow  # noqa: E402

PREFIX = "bqc"


def tenants(count: int) -> list[str]:
    return [f"{PREFIX}{k}" for k in range(count)]


def fill(service: MemoryService, names: list[str], n: int, threads: int) -> float:
    """Add pending episodes round robin until the tenants hold ``n``; seconds spent."""
    q = service.store.queue
    have = sum(sum(q.queue_counts(tenant_id=t).values()) for t in names)
    started = time.perf_counter()

    def add(i: int) -> None:
        body = EpisodeCreate(
            episode_id=f"e{i}", content=f"Person{i} moved to City{i % 97}.", occurred_at=utcnow()
        )
        service.add_episode(
            tenant_id=names[i % len(names)], body=body, status=EpisodeStatus.PENDING
        )

    # A few writers at once: one by one, 50k episodes take a quarter of an hour on Neo4j.
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for done, _ in enumerate(pool.map(add, range(have, n)), start=have + 1):
            if done % 5000 == 0:
                print(f"  filled {done}", file=sys.stderr)
    return time.perf_counter() - started


def put_back(store: Store, claimed: list[Episode]) -> None:
    """Pending again, due when they first were (next_attempt_at = recorded_at at capture)."""
    for ep in claimed:
        store.queue.enqueue(
            tenant_id=ep.tenant_id,
            episode_id=ep.episode_id,
            at=ep.recorded_at,
            from_statuses={"processing"},
            reset_attempts=True,
        )


def measure(
    store: Store, claims: int, scoped: str | None, nothing_due: bool
) -> tuple[list[float], list[Episode]]:
    times: list[float] = []
    claimed: list[Episode] = []
    try:
        for _ in range(claims):
            now = utcnow()
            if nothing_due:  # asked before any episode is due: all wait, as for a retry
                now -= timedelta(days=365)
            started = time.perf_counter()
            ep = store.queue.claim(
                owner="bench",
                now=now,
                lease_until=now + timedelta(minutes=10),
                max_attempts=3,
                tenant_id=scoped,
            )
            times.append((time.perf_counter() - started) * 1000)
            if nothing_due:
                if ep is not None:
                    raise SystemExit(f"claimed {ep.episode_id} though nothing was due")
                continue
            if ep is None:
                raise SystemExit("the queue ran dry: raise --n or lower --claims")
            claimed.append(ep)
    finally:
        put_back(store, claimed)
    return times, claimed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", required=True, help="a store URL (sqlite:///... or bolt://...)")
    p.add_argument("--n", type=int, default=10_000, help="pending episodes in the backlog")
    p.add_argument("--tenants", type=int, default=5)
    p.add_argument("--claims", type=int, default=200)
    p.add_argument("--fill-threads", type=int, default=4, help="writers while filling")
    p.add_argument("--scoped", action="store_true", help="claim for one tenant only")
    p.add_argument(
        "--nothing-due",
        action="store_true",
        help="idle polls: claims asked before any episode is due (as in a model outage)",
    )
    p.add_argument("--purge", action="store_true", help="delete the bench's tenants")
    args = p.parse_args()
    names = tenants(args.tenants)
    store = open_store(args.store)
    try:
        if args.purge:
            for t in names:
                store.purge_tenant(tenant_id=t)
            return
        service = MemoryService(store)
        spent = fill(service, names, args.n, args.fill_threads)
        counts = {t: store.queue.queue_counts(tenant_id=t) for t in names}
        pending = sum(c.get("pending", 0) for c in counts.values())
        times, claimed = measure(
            store, args.claims, names[0] if args.scoped else None, args.nothing_due
        )
        order = [ep.tenant_id for ep in claimed[: 2 * len(names)]]
        q = statistics.quantiles(times, n=20)
        print(
            json.dumps(
                {
                    "store": args.store.split(":")[0],
                    "n": args.n,
                    "pending": pending,
                    "claims": len(times),
                    "scoped": args.scoped,
                    "nothing_due": args.nothing_due,
                    "p50_ms": round(statistics.median(times), 2),
                    "p95_ms": round(q[18], 2),
                    "fill_s": round(spent, 1),
                    "first_tenants": order,
                }
            )
        )
    finally:
        store.close()


if __name__ == "__main__":
    main()
