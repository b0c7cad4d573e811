"""Current-state lookup latency of the Neo4j store at 10k and 100k facts (not part of the
test run).

One tenant is filled through MemoryService in batches of 1,000 facts: customers with ten
facts each (eight literals, two relations to accounts). At each size, ``--lookups``
random reads are timed:

- entity    the current state of one customer: every fact about it valid now, as known
            now (``GET /facts?subject=``: template facts.by_subject)
- point     one timeline's current value (``?subject=&predicate=``)

and p50/p99 are printed. The reads start at the entity's node by its unique index, so
their cost should not grow with the tenant.

    NEO4J_URI=bolt://... .venv/bin/python bench/neo4j_lookup.py [--sizes 10000 100000]
        [--lookups 2000]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graph.model import EpisodeCreate, MemoryDelta  # noqa: E402
from graph.service import MemoryService  # noqa: E402
from graph.stores.neo4j.store import Neo4jStore  # noqa: E402

T0 = datetime(2025, 1, 1, tzinfo=UTC)
FACTS_PER_CUSTOMER = 10
LITERALS = ("status", "tier", "segment", "region", "score", "risk", "channel", "language")


def customer_deltas(i: int) -> list[MemoryDelta]:
    common = {"subject": f"cust-{i}", "source_episode_id": "ep-bench", "valid_from": T0}
    out = [
        MemoryDelta(predicate=p, value=f"{p}-{(i + k) % 7}", **common)  # type: ignore[arg-type]
        for k, p in enumerate(LITERALS)
    ]
    for k in range(FACTS_PER_CUSTOMER - len(LITERALS)):
        out.append(
            MemoryDelta(
                predicate="owns",
                object=f"acct-{i}-{k}",
                object_type="Account",
                subject_type="Customer",
                **common,  # type: ignore[arg-type]
            )
        )
    return out


def fill(svc: MemoryService, tenant: str, start: int, stop: int) -> None:
    per_batch = 1000 // FACTS_PER_CUSTOMER
    for first in range(start, stop, per_batch):
        deltas = [d for i in range(first, min(stop, first + per_batch)) for d in customer_deltas(i)]
        svc.write_facts(tenant_id=tenant, deltas=deltas)


def timed(n: int, call: Callable[[], object]) -> tuple[float, float]:
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(samples, n=100)
    return cuts[49], cuts[98]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--uri", default=os.environ.get("NEO4J_URI"))
    p.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    p.add_argument("--lookups", type=int, default=2000)
    args = p.parse_args()
    if not args.uri:
        p.error("give --uri or set NEO4J_URI (e.g. from: bash tools/neo4j/neo4j.sh up)")
    store = Neo4jStore.from_url(args.uri)
    store.init()
    svc = MemoryService(store)
    tenant = f"bench-{uuid.uuid4().hex[:8]}"
    rng = random.Random(7)
    svc.add_episode(
        tenant_id=tenant,
        body=EpisodeCreate(episode_id="ep-bench", content="bench", occurred_at=T0),
    )
    customers = 0
    now = T0 + timedelta(days=1)
    try:
        for size in sorted(args.sizes):
            target = size // FACTS_PER_CUSTOMER
            started = time.perf_counter()
            fill(svc, tenant, customers, target)
            print(f"filled to {size} facts in {time.perf_counter() - started:.1f} s", flush=True)
            customers = target

            def entity(n: int = target) -> object:
                facts = svc.facts(tenant_id=tenant, subject=f"cust-{rng.randrange(n)}", as_of=now)
                assert len(facts) == FACTS_PER_CUSTOMER
                return facts

            def point(n: int = target) -> object:
                return svc.facts(
                    tenant_id=tenant,
                    subject=f"cust-{rng.randrange(n)}",
                    predicate="tier",
                    as_of=now,
                )

            timed(50, entity)  # warm up: plans cached, pages in memory
            for name, call in (("entity", entity), ("point", point)):
                p50, p99 = timed(args.lookups, call)
                print(
                    f"{size:>7} facts  {name:6s}  p50 {p50:6.2f} ms  p99 {p99:6.2f} ms", flush=True
                )
    finally:
        store.purge_tenant(tenant_id=tenant)
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
