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

``--erase SCRATCH_DIR`` times erasing the whole large tenant instead (``DELETE
/v1/tenants/{t}``), each run on a fresh copy of the file in SCRATCH_DIR (deleted after):

- ``one tx``: every table's rows of the tenant in one write transaction, as before;
- ``batched``: ``store.purge_tenant``, now: transactions of ``PURGE_BATCH`` rows.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/search_latency.py --facts 1000000 \
        --synthetic-vectors --store sqlite:////tmp/sq1m.db --load-only
    .venv/bin/python bench/purge_stall.py --store sqlite:////tmp/sq1m.db --tenant lat-1000000
    .venv/bin/python bench/purge_stall.py --store sqlite:////tmp/sq1m.db --tenant lat-1000000 \
        --erase /tmp/scratch --runs 3      # needs the file's size free, once
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
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

from graph.erasure import EraseTx, in_erase_transaction  # noqa: E402
from graph.errors import StoreUnavailableError  # noqa: E402
from graph.model import EpisodeCreate, MemoryDelta  # noqa: E402
from graph.service import MemoryService  # noqa: E402
from graph.stores.sqlite.store import TENANT_TABLES, SqliteStore  # noqa: E402

# Seven of the bench tenant's eight literal predicates (bench/search_latency.py LITERALS,
# all but "team"; the figures in bench/README are for these seven): a schema giving each a
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
    def work(tx: EraseTx) -> int:
        return sum(
            len(tx.expired_timelines(tenant_id=tenant, predicate=p, before=CUTOFF))
            for p in PREDICATES
        )

    return in_erase_transaction(store, work)


def plan_snapshot(store: SqliteStore, tenant: str) -> int:
    return sum(
        len(store.expired_timelines(tenant_id=tenant, predicate=p, before=CUTOFF))
        for p in PREDICATES
    )


def erase_in_one_tx(store: SqliteStore, tenant: str) -> int:
    with store.conn.write() as c:
        for table in TENANT_TABLES:  # the store's whitelist
            c.execute(f"DELETE FROM {table} WHERE tenant_id = ?", (tenant,))
    return 0


def erase_batched(store: SqliteStore, tenant: str) -> int:
    store.purge_tenant(tenant_id=tenant)
    return 0


def timed_with_writer(
    store: SqliteStore, plan: Callable[[], int]
) -> tuple[float, list[float], int, int]:
    """The plan's seconds, the other tenant's write latencies (ms) while it ran, how many
    of those writes were refused (busy past SQLite's timeout: a 503), and the
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
    refused: list[float] = []

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
                try:
                    svc.write_facts(tenant_id=other, deltas=[delta])
                except StoreUnavailableError:  # SQLite's 30 s busy timeout: a 503
                    refused.append(time.perf_counter() - t0)
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
    return elapsed, latencies, found, len(refused)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", required=True, help="sqlite:///PATH of a loaded bench file")
    ap.add_argument("--tenant", required=True, help="the large tenant, e.g. lat-1000000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--erase", metavar="SCRATCH_DIR", help="time erasing the tenant instead")
    args = ap.parse_args()
    if not args.store.startswith("sqlite:///"):
        ap.error("--store must be sqlite:///PATH: the writer lock is SQLite's")
    path = Path(args.store.removeprefix("sqlite:///"))
    store = SqliteStore(path)
    store.init()
    variants: dict[str, Callable[[SqliteStore, str], int]] = (
        {"one tx": erase_in_one_tx, "batched": erase_batched}
        if args.erase
        else {"in write tx": plan_in_write_tx, "snapshot": plan_snapshot}
    )
    results: dict[str, list[tuple[float, float, float, int, int]]] = {k: [] for k in variants}
    for run in range(args.runs):
        order = list(variants)
        if run % 2:
            order.reverse()
        for name in order:
            target = store
            if args.erase:  # a fresh copy each time: erasing is for good
                copy = Path(args.erase) / f"purge-stall-{uuid.uuid4().hex[:8]}.db"
                shutil.copyfile(path, copy)
                # Flush the copy's gigabytes now: the first checkpoint's fsync would
                # otherwise wait for them inside a timed write.
                os.sync()
                target = SqliteStore(copy)
                target.init()
            try:
                elapsed, lat, found, n_refused = timed_with_writer(
                    target, functools.partial(variants[name], target, args.tenant)
                )
            finally:
                if args.erase:
                    target.close()
                    for f in copy.parent.glob(copy.name + "*"):
                        f.unlink()
            worst = max(lat) if lat else elapsed * 1000
            p50 = statistics.median(lat) if lat else elapsed * 1000
            results[name].append((elapsed, p50, worst, len(lat), n_refused))
            print(
                f"run {run + 1} {name:12s} plan {elapsed:6.2f} s ({found} keys)"
                f"  other tenant: {len(lat)} writes ({n_refused} refused),"
                f" p50 {p50:7.1f} ms, max {worst:7.1f} ms",
                flush=True,
            )
    what = "erasing" if args.erase else f"planning {len(PREDICATES)} predicates of"
    print(f"\nmedian of {args.runs} runs, {what} {args.tenant}:")
    for name, rows in results.items():
        med = [statistics.median(r[i] for r in rows) for i in range(5)]
        print(
            f"  {name:12s} plan {med[0]:6.2f} s; other tenant's writes during it:"
            f" {med[3]:.0f} ({med[4]:.0f} refused), p50 {med[1]:.1f} ms, max {med[2]:.1f} ms"
        )
    store.close()


if __name__ == "__main__":
    main()
