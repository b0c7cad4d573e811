"""The same searches against two or more stores holding the same data, interleaved
question by question in one process: a server setting (JVM flags, page cache) measured
without the rest of the machine's noise, which otherwise hides it.

Each store is searched by the same code and the same embedding model; each question runs
against every store in turn (the order rotating per question). Figures are p50/p95 of the
full search pipeline over ``--rounds`` passes of the questions of bench/search_latency.py,
with each store's ratio to the first. The stores must hold the tenant that
search_latency.py loads (``--load-only`` once, then copy the server's data directory
and start one server per setting on a copy):

    HF_HUB_OFFLINE=1 .venv/bin/python bench/search_ab.py --facts 100000 \
        --store NAME=bolt://127.0.0.1:PORT_A --store NAME=bolt://127.0.0.1:PORT_B
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from search_latency import bench_questions, interleaved, print_against_first  # noqa: E402

from graph.embeddings import default_embedder  # noqa: E402
from graph.retrieval import Retriever, SearchableStore  # noqa: E402
from graph.stores import open_store  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--store", action="append", required=True, help="NAME=URL, twice or more")
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    if len(args.store) < 2:
        ap.error("name at least two stores")

    tenant = f"lat-{args.facts}"
    embedder = default_embedder()
    embedder.encode(["load"])
    retrievers: dict[str, Retriever] = {}
    for spec in args.store:
        name, sep, url = spec.partition("=")
        if not sep or not name or name in retrievers:
            ap.error(f"--store wants NAME=URL with distinct names, got {spec!r}")
        store = open_store(url)
        assert isinstance(store, SearchableStore)
        if store.get_episode(tenant_id=tenant, episode_id="ep-0") is None:
            sys.exit(f"no tenant {tenant} in {url}: run bench/search_latency.py --load-only")
        retrievers[name] = Retriever(store, embedder=embedder)
    gc.collect()
    gc.freeze()  # as `sgam serve` does once the model has loaded

    queries = bench_questions(args.facts // 10, args.queries)
    print(f"tenant {tenant}")
    variants = {
        name: lambda q, r=r: r.search(tenant_id=tenant, query=q) for name, r in retrievers.items()
    }
    samples = interleaved(variants, queries, args.rounds)
    print_against_first("store", samples)
    for r in retrievers.values():
        r.store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
