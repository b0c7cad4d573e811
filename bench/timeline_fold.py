"""Folding a long timeline, and deleting an episode on it (which folds it again).

A timeline's ledger is folded whenever an episode on it is deleted (DELETE
/episodes/{id}, retention's episode purge, a forget): ``graph.temporal.fold`` applies
every entry in order. With ``--entries`` N, the script folds N daily values of one
timeline (the pure core, no store), then writes the same N values to one timeline of a
fresh SQLite file, one episode per 1,000, plus one episode of a single later value, and
times that last write and deleting its episode. Median of ``--runs`` (folds) and of half
as many files.

    .venv/bin/python bench/timeline_fold.py [--entries 1000 4000] [--runs 5]

To compare two versions of the code, copy this file into each checkout and run it from
there in turn: it imports the checkout it sits in.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graph import EpisodeCreate, EpisodeKind, MemoryDelta, MemoryService  # noqa: E402
from graph.model import Cardinality, ValueType  # noqa: E402
from graph.stores import open_store  # noqa: E402
from graph.temporal import Assertion, Claim, fold  # noqa: E402

T0 = datetime(2020, 1, 1, tzinfo=UTC)


def entries(n: int) -> list[Assertion]:
    return [
        Assertion(
            seq=i,
            kind="assert",
            fact_id=f"f{i}",
            recorded_at=T0,
            valid_from=T0 + timedelta(days=i),
            claim=Claim(
                subject="acct",
                subject_type="Account",
                predicate="balance",
                value=str(i),
                value_type=ValueType.STRING,
                object=None,
                object_type=None,
                confidence=1.0,
                memory_type="semantic",
                schema_version=0,
                retention_policy="keep",
                cardinality=Cardinality.ONE,
            ),
            source_episode_id=f"e{i // 1000}",
        )
        for i in range(n)
    ]


def write_then_delete(n: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as d:
        store = open_store(f"sqlite:///{d}/fold.db")
        service = MemoryService(store)
        try:
            for b in range(0, n + 1, 1000):
                eid = f"e{b // 1000}" if b < n else "last"
                service.add_episode(
                    tenant_id="t",
                    body=EpisodeCreate(
                        episode_id=eid, kind=EpisodeKind.EVENT, content=eid, occurred_at=T0
                    ),
                )
                top = min(n, b + 1000) if b < n else n + 1
                t = time.perf_counter()
                service.write_facts(
                    tenant_id="t",
                    deltas=[
                        MemoryDelta(
                            subject="acct",
                            predicate="balance",
                            value=str(i),
                            valid_from=T0 + timedelta(days=i),
                            source_episode_id=eid,
                        )
                        for i in range(b, top)
                    ],
                )
                wrote = time.perf_counter() - t  # the last: one fact after all the others
            t = time.perf_counter()
            service.delete_episode(tenant_id="t", episode_id="last")
            return wrote, time.perf_counter() - t
        finally:
            store.close()


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--entries", type=int, nargs="+", default=[1000, 4000])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    print(
        "| entries | fold, ms | write one fact after them (SQLite), ms | delete its episode, ms |"
    )
    print("|---|---|---|---|")
    for n in args.entries:
        ledger = entries(n)
        folds = []
        for _ in range(args.runs):
            t = time.perf_counter()
            state = fold(ledger)
            folds.append(time.perf_counter() - t)
        assert len(state) == n
        store_runs = [write_then_delete(n) for _ in range(max(1, args.runs // 2))]
        print(
            f"| {n:,} | {statistics.median(folds) * 1000:.1f}"
            f" | {statistics.median(w for w, _ in store_runs) * 1000:.1f}"
            f" | {statistics.median(d for _, d in store_runs) * 1000:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
