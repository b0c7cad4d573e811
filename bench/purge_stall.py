"""How long a retention purge's plan stalls another tenant's writes (not part of the test run).

A purge pass first plans: for each predicate with a retention it lists the timelines with
a version whose validity ended before the cutoff, a scan of the tenant's versions (no
index leads with the predicate). On SQLite every tenant's writes wait for the one writer
lock, so where that scan runs matters more than what it costs:

- ``in write tx``: the scan inside an erase (write) transaction, as the purge planned
  before; the scan holds the writer lock;
- ``snapshot``: ``store.expired_timelines``, a read of its own (WAL snapshot), as the
  purge plans now.

While each variant plans every predicate of a large tenant (the cutoff lies before every
version, so nothing is deleted and the file stays as it was), a thread writes one fact at
a time to another tenant, and reports how long its writes took. The variants alternate,
run by run.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/search_latency.py --facts 1000000 \
        --synthetic-vectors --store sqlite:////tmp/sq1m.db --load-only
    .venv/bin/python bench/purge_stall.py --store sqlite:////tmp/sq1m.db --tenant lat-1000000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graph.erasure import in_erase_transaction  # noqa: E402
from graph.model import EpisodeCreate, MemoryDelta  # noqa: E402
from graph.service import MemoryService  # noqa: E402
from graph.stores.sqlite.store import SqliteStore  # noqa: E402

# The bench tenant's literal predicates (bench/search_latency.py): a schema giving each a
# retention would have the purge scan each.
PREDICATES = (
    "lives_in",
    "employer_city",
    "phone_number",
    "favourite_food",
    "car",
    "passport_deadline",
    "shoe_size",
)
CUTOFF = datetime(1900, 1, 1, tzinfo=UTC)  # before every version: the scan, no deletion


def plan_in_write_tx(store: SqliteStore, tenant: str) -> int:
    def work(tx: object) -> int:
        return sum(
            len(tx.expired_timelines(tenant_id=tenant, predicate=p, before=CUTOFF))  # type: ignore[attr-defined]
            for p in PREDICATES
        )

    return in_erase_transaction(store, work)  # type: ignore[arg-type]


def plan_snapshot(store: SqliteStore, tenant: str) -> int:
    return sum(
        len(store.expired_timelines(tenant_id=tenant, predicate=p, before=CUTOFF))
        for p in PREDICATES
    )


def timed_with_writer(
    store: SqliteStore, plan: Callable[[], int]
) -> tuple[float, list[float], int]:
    """The plan's seconds, the other tenant's write latencies (ms) while it ran, and the
    plan's answer."""
    svc = MemoryService(store)
    other = f"other-{uuid.uuid4().hex[:8]}"
    latencies: list[float] = []
    stop = threading.Event()
    started = threading.Event()

    t_start = datetime(2026, 1, 1, tzinfo=UTC)
    svc.add_episode(
        tenant_id=other, body=EpisodeCreate(episode_id="ep", content="w", occurred_at=t_start)
    )
    failed: list[BaseException] = []

    def writer() -> None:
        i = 0
        try:
            while not stop.is_set():
                delta = MemoryDelta(
                    subject=f"p{i % 50}",
                    predicate="status",
                    value=f"v{i}",
                    valid_from=t_start + timedelta(minutes=i),
                    source_episode_id="ep",
                )
                t0 = time.perf_counter()
                svc.write_facts(tenant_id=other, deltas=[delta])
                latencies.append((time.perf_counter() - t0) * 1000)
                started.set()
                i += 1
                time.sleep(0.005)
        except BaseException as e:  # reported by the main thread
            failed.append(e)
            started.set()

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    started.wait()
    latencies.clear()
    t0 = time.perf_counter()
    found = plan()
    elapsed = time.perf_counter() - t0
    stop.set()
    thread.join()
    if failed:
        raise failed[0]
    store.purge_tenant(tenant_id=other)
    return elapsed, latencies, found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", required=True, help="sqlite:///PATH of a loaded bench file")
    ap.add_argument("--tenant", required=True, help="the large tenant, e.g. lat-1000000")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if not args.store.startswith("sqlite:///"):
        ap.error("--store must be sqlite:///PATH: the writer lock is SQLite's")
    store = SqliteStore(args.store.removeprefix("sqlite:///"))
    store.init()
    variants: dict[str, Callable[[], int]] = {
        "in write tx": lambda: plan_in_write_tx(store, args.tenant),
        "snapshot": lambda: plan_snapshot(store, args.tenant),
    }
    results: dict[str, list[tuple[float, float, float, int]]] = {k: [] for k in variants}
    for run in range(args.runs):
        order = list(variants)
        if run % 2:
            order.reverse()
        for name in order:
            elapsed, lat, found = timed_with_writer(store, variants[name])
            worst = max(lat) if lat else elapsed * 1000
            p50 = statistics.median(lat) if lat else elapsed * 1000
            results[name].append((elapsed, p50, worst, len(lat)))
            print(
                f"run {run + 1} {name:12s} plan {elapsed:6.2f} s ({found} keys)"
                f"  other tenant: {len(lat)} writes, p50 {p50:7.1f} ms, max {worst:7.1f} ms",
                flush=True,
            )
    print(f"\nmedian of {args.runs} runs, {len(PREDICATES)} predicates of {args.tenant}:")
    for name, rows in results.items():
        med = [statistics.median(r[i] for r in rows) for i in range(4)]
        print(
            f"  {name:12s} plan {med[0]:6.2f} s; other tenant's writes during it:"
            f" {med[3]:.0f}, p50 {med[1]:.1f} ms, max {med[2]:.1f} ms"
        )
    store.close()


if __name__ == "__main__":
    main()
