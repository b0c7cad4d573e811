"""Reads that sought a whole tenant on SQLite, timed on a large file.

    .venv/bin/python bench/seek_reads.py /tmp/audit-1m.db --tenant lat-1000000 \\
        --episode ep-50000 --object company-1659 --entity company-1659 --runs 5

Times, median of ``--runs`` each: the facts citing one episode (``GET
/episodes/{id}/facts``), the facts naming one entity as object (the incoming half of
``GET /entities/{id}``, ``GET /facts?object=``), and a dry run of forgetting an entity
(``POST /entities/{id}/forget?dry_run=true``: a write transaction, rolled back). The
dry run writes nothing that stays, but takes the file's writer lock: run it on a copy.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from graph.erasure import forget
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore


def timed(fn: Callable[[], object], runs: int) -> float:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("path")
    ap.add_argument("--tenant", required=True)
    ap.add_argument("--episode", required=True)
    ap.add_argument("--object", required=True)
    ap.add_argument("--entity", required=True)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    store = SqliteStore(a.path)
    store.init()
    svc = MemoryService(store)
    cases: dict[str, Callable[[], object]] = {
        "episode facts": lambda: svc.episode_facts(tenant_id=a.tenant, episode_id=a.episode),
        "facts by object": lambda: svc.facts(tenant_id=a.tenant, object=a.object),
        "forget (dry run)": lambda: forget(
            store, tenant_id=a.tenant, entity_id=a.entity, dry_run=True
        ),
    }
    for name, fn in cases.items():
        fn()  # warm: the pages it reads in the cache
        print(f"{name}: {timed(fn, a.runs):.1f} ms")
    store.close()


if __name__ == "__main__":
    main()
