"""How a burst of supersessions slows Neo4j's fact-vector search, and for how long.

Supersessions written through the ledger: --updates people of the tenant that
bench/search_latency.py loads (``--load-only``) each get a new ``car`` from a date after
everything else, so each write cuts the person's open version (a version retired, a
shorter one inserted under the same fact id) and adds a fact; the indexer then gives the
new facts vectors (synthetic ones, as the load did). Before FactVector nodes (commit
9f0c1a4 and earlier), a version carried its fact's vector and the vector index filtered
on ``current``: each supersession rewrote the retired version's entry (a delete and an add
into a new HNSW segment) and added the cut version's copy, besides the new fact's. Now
only the new fact's vector is added.

The script times ``search.vector_facts`` (the fact branch of a search's candidates) and
the whole search, each question of bench/search_latency.py both in turn, before the
writes, right after them and the indexing, and --settle seconds later, and prints p50/p95
per phase, with the write and indexing rates. Each run adds --updates facts to the
tenant. For the older layout, run this file from a checkout of that commit (copied into
its bench/), against a server that checkout loaded:

    HF_HUB_OFFLINE=1 .venv/bin/python bench/neo4j_vector_churn.py --store bolt://... \
        --facts 100000 --updates 30000
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", required=True, help="bolt:// or neo4j:// URL")
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--updates", type=int, default=30_000, help="supersessions to write")
    ap.add_argument("--batch", type=int, default=1_000, help="facts per write")
    ap.add_argument("--rounds", type=int, default=4, help="passes over the questions a phase")
    ap.add_argument("--warm", type=int, default=20, help="untimed passes first (the JIT)")
    ap.add_argument("--settle", type=int, default=120, help="seconds before the last phase")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "bench"))

    from search_latency import START, SyntheticEmbedder, bench_questions, percentiles

    from graph.embeddings import default_embedder
    from graph.model import EpisodeCreate, MemoryDelta
    from graph.retrieval import Retriever
    from graph.service import MemoryService
    from graph.stores import open_store
    from graph.stores.neo4j.store import Neo4jStore
    from graph.stores.neo4j.templates import load_templates

    store = open_store(args.store)
    if not isinstance(store, Neo4jStore):
        sys.exit("--store must name a Neo4j server")
    tenant = f"lat-{args.facts}"
    embedder = default_embedder()
    questions = bench_questions(args.facts // 10, 50)
    vectors = embedder.encode(questions)
    window = Retriever.window()
    query = load_templates()["search.vector_facts"].text
    driver, database = store.conn.driver, store.conn.database

    def params(v: Any) -> dict[str, Any]:
        return {
            "vector": [float(x) for x in v],
            "tenant_id": tenant,
            "model": embedder.name,
            "fetch": 62,  # what a search of the present asks first (limit 50)
            "as_of": window.as_of.isoformat(),
            "known_at": window.known_at.isoformat(),
        }

    prepared = [params(v) for v in vectors]

    retriever = Retriever(store, embedder=embedder)
    gc.collect()
    gc.freeze()  # as `sgam serve` does once the model has loaded

    def phase(label: str) -> None:
        samples, searches = [], []
        with driver.session(database=database) as s:
            for _ in range(args.rounds):
                for q, p in zip(questions, prepared, strict=True):
                    start = time.perf_counter()
                    rows = s.execute_read(lambda tx, p=p: list(tx.run(query, p)))
                    samples.append(time.perf_counter() - start)
                    if not rows:
                        sys.exit(f"no vector hits for {tenant}: load it with --synthetic-vectors")
                    start = time.perf_counter()
                    retriever.search(tenant_id=tenant, query=q)
                    searches.append(time.perf_counter() - start)
        p50, p95 = percentiles(samples)
        s50, s95 = percentiles(searches)
        print(f"| {label} | {p50:.1f} / {p95:.1f} | {s50:.1f} / {s95:.1f} |", flush=True)

    service = MemoryService(store)
    run = f"{time.time():.0f}"  # each run supersedes the last one's values
    people = min(args.updates, args.facts // 10)
    print(f"store {store.url}, tenant {tenant}, code in {ROOT}\n")
    with driver.session(database=database) as s:
        for _ in range(args.warm):  # a fresh server's JIT takes thousands of queries
            for p in prepared:
                s.execute_read(lambda tx, p=p: list(tx.run(query, p)))
    for q in questions:
        retriever.search(tenant_id=tenant, query=q)
    print("| phase | fact vector query p50 / p95 ms | whole search p50 / p95 ms |")
    print("|---|---|---|")
    phase(f"before ({args.warm} passes to warm)")
    at = START + timedelta(days=720)  # after every value the load wrote, before today
    start = time.perf_counter()
    for b in range(0, people, args.batch):
        ep = f"churn-{run}-{b}"
        service.add_episode(
            tenant_id=tenant,
            body=EpisodeCreate(episode_id=ep, occurred_at=at, content="cars changed hands"),
        )
        service.write_facts(
            tenant_id=tenant,
            deltas=[
                MemoryDelta(
                    subject=f"person-{p}",
                    predicate="car",
                    value=f"car {run} {p}",
                    valid_from=at,
                    source_episode_id=ep,
                )
                for p in range(b, min(people, b + args.batch))
            ],
        )
    wrote = time.perf_counter() - start
    start = time.perf_counter()
    synthetic = SyntheticEmbedder(embedder.name, embedder.dim)
    indexed = store.search.index_pending(tenant_id=tenant, embedder=synthetic)
    took = time.perf_counter() - start
    print(
        f"\n{people:,} supersessions in {wrote:.0f} s ({people / wrote:,.0f} facts/s); "
        f"{indexed:,} items given vectors in {took:.0f} s\n"
    )
    phase(f"right after {people:,} supersessions")
    time.sleep(args.settle)
    phase(f"{args.settle} s later")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
