"""Extraction throughput through the durable queue (not part of the test run).

In one process, against a fresh store and a loopback chat-completions server
(:mod:`extraction.loopback`, a stand-in model answering one fact per episode):

- queue     N episodes stored as ``pending``, drained by W worker threads: each is
            claimed with a lease, sent to the model once, validated, written, completed.
            Timed from the first insert until every episode is ``extracted``.
- sync      the same episodes with ``extract=sync``, one after another (the hot path).
- baseline  the same episodes and the same fact written directly (add_episode +
            write_facts, what ``POST /episodes`` + ``POST /facts`` do): no model, no queue.

Reports model calls per episode and episodes/s, each the median of ``--runs`` runs, and
each rate as a ratio of the baseline measured in the same run. ``--latency-ms`` makes the
model answer after that long, which is where several workers pay off.

    .venv/bin/python bench/extraction_queue.py [--runs 3] [--episodes 200] [--workers 4]
        [--latency-ms 0] [--store sqlite|neo4j://...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extraction import LlmExtractor, on_episode_created, start_workers  # noqa: E402
from extraction.loopback import LoopbackLLM, Reply, rule_responder  # noqa: E402
from extraction.settings import ExtractionSettings  # noqa: E402
from graph.model import EpisodeCreate, EpisodeStatus, ExtractMode, MemoryDelta  # noqa: E402
from graph.port import Store  # noqa: E402
from graph.service import MemoryService  # noqa: E402
from graph.stores import open_store  # noqa: E402

T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)
TENANTS: list[str] = []  # purged at the end: a shared Neo4j keeps nothing of the bench


def new_tenant(prefix: str) -> str:
    TENANTS.append(f"{prefix}-{uuid.uuid4().hex[:10]}")
    return TENANTS[-1]


def body(i: int) -> EpisodeCreate:
    return EpisodeCreate(
        episode_id=f"e{i}", content=f"Person{i}'s city is City{i % 50}", occurred_at=T0
    )


def run_queue(
    service: MemoryService, llm: LoopbackLLM, n: int, workers: int, settings: ExtractionSettings
) -> tuple[float, float]:
    """(episodes/s, model calls per episode)."""
    tenant = new_tenant("bq")
    ex = LlmExtractor(base_url=llm.base_url, model="loopback")
    calls = llm.calls
    pool = start_workers(service, ex, settings, count=workers, tenant_id=tenant)
    queue = service.store.queue
    started = time.perf_counter()
    for i in range(n):
        ep, _ = service.add_episode(tenant_id=tenant, body=body(i), status=EpisodeStatus.PENDING)
        on_episode_created(service, ex, ep, ExtractMode.BACKGROUND, settings=settings)
    while queue.queue_counts(tenant_id=tenant).get("extracted", 0) < n:
        time.sleep(0.005)
    elapsed = time.perf_counter() - started
    pool.stop()
    ex.close()
    _check(service, tenant, n)
    return n / elapsed, (llm.calls - calls) / n


def run_sync(
    service: MemoryService, llm: LoopbackLLM, n: int, settings: ExtractionSettings
) -> tuple[float, float]:
    tenant = new_tenant("bs")
    ex = LlmExtractor(base_url=llm.base_url, model="loopback")
    calls = llm.calls
    started = time.perf_counter()
    for i in range(n):
        ep, _ = service.add_episode(tenant_id=tenant, body=body(i))
        report = on_episode_created(service, ex, ep, ExtractMode.SYNC, settings=settings)
        assert report.status == EpisodeStatus.EXTRACTED, report.error
    elapsed = time.perf_counter() - started
    ex.close()
    _check(service, tenant, n)
    return n / elapsed, (llm.calls - calls) / n


def run_baseline(service: MemoryService, n: int) -> float:
    tenant = new_tenant("bb")
    started = time.perf_counter()
    for i in range(n):
        ep, _ = service.add_episode(tenant_id=tenant, body=body(i))
        delta = MemoryDelta(
            subject=f"person{i}",
            predicate="city",
            value=f"City{i % 50}",
            source_episode_id=ep.episode_id,
            valid_from=T0,
        )
        service.write_facts(tenant_id=tenant, deltas=[delta])
    elapsed = time.perf_counter() - started
    _check(service, tenant, n)
    return n / elapsed


def _check(service: MemoryService, tenant: str, n: int) -> None:
    """A benchmark that wrote the wrong thing measures nothing."""
    got = service.facts(tenant_id=tenant, predicate="city", limit=1000)
    assert len(got) == min(n, 1000), f"{tenant}: {len(got)} facts for {n} episodes"


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--episodes", type=int, default=200)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--latency-ms", type=float, default=0.0, help="model answer delay")
    p.add_argument("--store", default="sqlite", help="'sqlite' (temporary file) or a store URL")
    args = p.parse_args()
    if args.runs < 3:
        p.error("--runs must be at least 3 (medians of fewer runs say little)")

    tmp = tempfile.TemporaryDirectory()
    url = f"sqlite:///{tmp.name}/bench.db" if args.store == "sqlite" else args.store
    store: Store = open_store(url)
    service = MemoryService(store)
    delay = args.latency_ms / 1000

    def responder(request: dict[str, Any]) -> Reply:
        reply = rule_responder(request)
        return Reply(reply.status, reply.body, reply.headers, delay=delay)

    settings = ExtractionSettings(
        llm_base_url=None, llm_model=None, worker_poll_seconds=0.05, workers=args.workers
    )
    results: dict[str, list[float]] = {"queue": [], "sync": [], "baseline": [], "calls": []}
    try:
        with LoopbackLLM(responder) as llm:
            for r in range(args.runs):
                base = run_baseline(service, args.episodes)
                qeps, qcalls = run_queue(service, llm, args.episodes, args.workers, settings)
                seps, scalls = run_sync(service, llm, args.episodes, settings)
                results["baseline"].append(base)
                results["queue"].append(qeps)
                results["sync"].append(seps)
                results["calls"] += [qcalls, scalls]
                print(
                    f"run {r + 1}: baseline {base:8.1f} ep/s   queue {qeps:8.1f} ep/s"
                    f"   sync {seps:8.1f} ep/s   calls/episode {qcalls:.2f} / {scalls:.2f}",
                    file=sys.stderr,
                )
    finally:
        for t in TENANTS:
            store.purge_tenant(tenant_id=t)
            store.queue.purge_queue_data(tenant_id=t)
        store.close()
        tmp.cleanup()

    base = median(results["baseline"])

    def show(k: str) -> str:
        return f"{median(results[k]):9.1f}  {median(results[k]) / base:6.2f}"

    print(
        f"store={url.split(':')[0]} episodes={args.episodes} workers={args.workers} "
        f"model latency={args.latency_ms:g} ms runs={args.runs} (medians)"
    )
    print("path                       episodes/s  vs baseline  model calls/episode")
    print(f"baseline (add + write)     {base:9.1f}    1.00         0")
    print(
        f"queue ({args.workers} workers)          {show('queue')}       {max(results['calls']):.2f}"
    )
    print(f"sync (one at a time)       {show('sync')}       {max(results['calls']):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
