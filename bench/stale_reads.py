"""The read half of a search's staleness check, on a page that shows bulk-write episodes.

A search that shows an episode checks every version on every timeline the episode
asserted on (graph/retrieval/stale.py): for an episode that sourced a bulk write of N
facts, thousands of versions. The script writes ``--people`` timelines (one per person,
``car``) from ``--episodes`` episodes, each superseding every person's value of the one
before, then times the check over all of those episodes (a page shows up to 10) as a
search runs it: ``stale_episodes`` over the store's search index, at the present.

    .venv/bin/python bench/stale_reads.py [--store sqlite|bolt://…] [--people 1000]
        [--episodes 4] [--runs 7]

To compare two versions of the code, copy this file into each checkout and run it from
there in turn: it imports the checkout it sits in, and its calls are the same in the code
before the staleness reads were slimmed (8e83119). Each invocation writes a fresh tenant
(a fresh file on SQLite) and removes it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graph import EpisodeCreate, EpisodeKind, MemoryDelta, MemoryService  # noqa: E402
from graph.retrieval import SearchableStore, Window  # noqa: E402
from graph.retrieval.stale import stale_episodes  # noqa: E402
from graph.stores import open_store  # noqa: E402

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", default="sqlite")
    ap.add_argument("--people", type=int, default=1000)
    ap.add_argument("--episodes", type=int, default=4)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        url = f"sqlite:///{d}/stale.db" if args.store == "sqlite" else args.store
        store = open_store(url)
        assert isinstance(store, SearchableStore)
        tenant = f"bench-stale-{uuid.uuid4().hex[:8]}"
        service = MemoryService(store)
        ids = [f"ep-{k}" for k in range(args.episodes)]
        try:
            for k, eid in enumerate(ids):
                at = T0 + timedelta(days=k)
                text = " ".join(f"p{i} drives car{k}x{i}" for i in range(0, args.people, 10))
                service.add_episode(
                    tenant_id=tenant,
                    body=EpisodeCreate(
                        episode_id=eid, kind=EpisodeKind.EVENT, content=text, occurred_at=at
                    ),
                )
                service.write_facts(
                    tenant_id=tenant,
                    deltas=[
                        MemoryDelta(
                            subject=f"p{i}",
                            predicate="car",
                            value=f"car{k}x{i}",
                            valid_from=at,
                            source_episode_id=eid,
                        )
                        for i in range(args.people)
                    ],
                )
            now = datetime.now(UTC)
            window = Window(as_of=now, known_at=now, latest=True)
            episodes = store.search.episodes_by_id(tenant_id=tenant, episode_ids=ids, known_at=now)
            took: list[float] = []
            stale: set[str] = set()
            for _ in range(args.runs + 1):  # the first run warms caches and the server
                t = time.perf_counter()
                stale = stale_episodes(
                    store.search,
                    tenant_id=tenant,
                    window=window,
                    episode_ids=ids,
                    episodes=episodes,
                    facts=[],
                )
                took.append(time.perf_counter() - t)
            # Every episode but the last sourced values superseded since.
            assert stale == set(ids[:-1]), sorted(stale)
        finally:
            store.purge_tenant(tenant_id=tenant)
            store.close()
    ms = sorted(t * 1000 for t in took[1:])
    print(
        f"{args.store.split(':')[0]}: {args.episodes} episodes x {args.people} facts,"
        f" {args.episodes * args.people} versions known now:"
        f" median {statistics.median(ms):.1f} ms, min {ms[0]:.1f}, max {ms[-1]:.1f}"
        f" ({args.runs} runs)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
