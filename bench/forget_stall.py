"""How long another tenant's writes wait while one tenant forgets an entity with a long
history, on the embedded store (one writer lock for every tenant).

Tenant A's entity ``acme`` is the employer of ``--episodes`` x ``--per`` people, each
episode stating ``--per`` employments and as many cities (so forgetting acme deletes the
episodes, and with them every fact they sourced). While A forgets acme, a thread writes
one fact at a time to tenant B; the figures are the forget's wall time and B's write
latencies during it (max and p50), median of ``--runs`` runs (a fresh file each).

    .venv/bin/python bench/forget_stall.py [--episodes 100] [--per 100] [--runs 3]

To compare two versions of the code, copy this file into each checkout and run it from
there in turn: it imports the checkout it sits in, and its calls are the same in the code
before forget was split into batches (8e83119).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graph import EpisodeCreate, EpisodeKind, MemoryDelta, MemoryService  # noqa: E402
from graph.erasure import erasable, forget  # noqa: E402
from graph.stores import open_store  # noqa: E402

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def one_run(episodes: int, per: int) -> tuple[float, float, float, int]:
    with tempfile.TemporaryDirectory() as d:
        store = open_store(f"sqlite:///{d}/forget.db")
        service = MemoryService(store)
        try:
            for k in range(episodes):
                at = T0 + timedelta(days=k)
                service.add_episode(
                    tenant_id="a",
                    body=EpisodeCreate(
                        episode_id=f"ep-{k}",
                        kind=EpisodeKind.EVENT,
                        content=f"acme payroll {k}",
                        occurred_at=at,
                    ),
                )
                people = [f"p{k}-{i}" for i in range(per)]
                service.write_facts(
                    tenant_id="a",
                    deltas=[
                        MemoryDelta(
                            subject=p,
                            predicate="employer",
                            object="acme",
                            object_type="Company",
                            valid_from=at,
                            source_episode_id=f"ep-{k}",
                        )
                        for p in people
                    ]
                    + [
                        MemoryDelta(
                            subject=p,
                            predicate="city",
                            value=f"city-{k}",
                            valid_from=at,
                            source_episode_id=f"ep-{k}",
                        )
                        for p in people
                    ],
                )
            service.add_episode(
                tenant_id="b",
                body=EpisodeCreate(
                    episode_id="b-0", kind=EpisodeKind.EVENT, content="ben", occurred_at=T0
                ),
            )
            waits: list[float] = []
            stop = threading.Event()

            def other_tenant() -> None:
                i = 0
                while not stop.is_set():
                    t = time.perf_counter()
                    service.write_facts(
                        tenant_id="b",
                        deltas=[
                            MemoryDelta(
                                subject="ben",
                                predicate="status",
                                value=f"s{i}",
                                valid_from=T0 + timedelta(seconds=i),
                                source_episode_id="b-0",
                            )
                        ],
                    )
                    waits.append(time.perf_counter() - t)
                    i += 1

            writer = threading.Thread(target=other_tenant)
            writer.start()
            time.sleep(0.2)  # B writes at its own pace first
            waits.clear()
            t = time.perf_counter()
            result = forget(erasable(store), tenant_id="a", entity_id="acme", dry_run=False)
            took = time.perf_counter() - t
            stop.set()
            writer.join()
            assert result.facts == 2 * episodes * per, result
            return took, max(waits), statistics.median(waits), len(waits)
        finally:
            store.close()


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--per", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    runs = [one_run(args.episodes, args.per) for _ in range(args.runs)]
    forget_s = statistics.median(r[0] for r in runs)
    worst = statistics.median(r[1] for r in runs)
    p50 = statistics.median(r[2] for r in runs)
    writes = statistics.median(r[3] for r in runs)
    print(
        f"forget of {2 * args.episodes * args.per} facts from {args.episodes} episodes:"
        f" {forget_s:.2f} s; tenant B's writes meanwhile: {writes:.0f},"
        f" max {worst * 1000:.0f} ms, p50 {p50 * 1000:.1f} ms"
        f" (median of {args.runs} runs; per run: "
        + ", ".join(f"{r[0]:.2f} s / max {r[1] * 1000:.0f} ms" for r in runs)
        + ")"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
