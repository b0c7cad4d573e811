"""How a burst of supersessions slows Neo4j's filtered fact-vector search, and for how long.

The fact vector index holds ``current`` as a filter property (cypher/schema_setup.cypher),
so every supersession, which sets ``current = false`` on the version it retires, rewrites
that version's document in the index: Lucene deletes it and adds it again, into a new
segment with an HNSW graph of its own. Search then walks more segments and skips deleted
documents until merges reclaim them.

This script times ``search.vector_facts`` (the fact branch of a search's candidates) and
the whole search, each question of bench/search_latency.py both in turn; then flips
``current`` off and on again on --updates of the tenant's current versions (each flip the
index update a supersession makes; the data ends as it started), then times both again at
once and after --settle seconds, and prints p50/p95 per phase. Needs the tenant that
search_latency.py loads (``--load-only``); the figures in bench/README.md were taken on
servers restarted after the load. The "after" phases are what a live server with steady
supersessions lives with:

    HF_HUB_OFFLINE=1 .venv/bin/python bench/neo4j_vector_churn.py --store bolt://... \
        --facts 100000 --updates 30000
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from search_latency import bench_questions, percentiles  # noqa: E402

from graph.embeddings import default_embedder  # noqa: E402
from graph.retrieval import Retriever  # noqa: E402
from graph.stores import open_store  # noqa: E402
from graph.stores.neo4j.store import Neo4jStore  # noqa: E402
from graph.stores.neo4j.templates import load_templates  # noqa: E402

# Bench-only writes; the tenant and batch size travel as parameters.
_PICK = (
    "MATCH ()-[r:FACT]->() WHERE r.tenant_id = $tenant AND r.current = true"
    " AND r.embedding IS NOT NULL RETURN elementId(r) AS id LIMIT $n"
)
_FLIP = "UNWIND $ids AS id MATCH ()-[r:FACT]->() WHERE elementId(r) = id SET r.current = $value"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", required=True, help="bolt:// or neo4j:// URL")
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--updates", type=int, default=30_000, help="versions flipped off and on")
    ap.add_argument("--batch", type=int, default=1_000, help="versions per write transaction")
    ap.add_argument("--rounds", type=int, default=4, help="passes over the questions a phase")
    ap.add_argument("--warm", type=int, default=20, help="untimed passes first (the JIT)")
    ap.add_argument("--settle", type=int, default=120, help="seconds before the last phase")
    args = ap.parse_args(argv)

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

    with driver.session(database=database) as s:
        ids = [r["id"] for r in s.run(_PICK, tenant=tenant, n=args.updates)]
    print(f"store {store.url}, tenant {tenant}, {len(ids):,} versions to flip\n")
    with driver.session(database=database) as s:
        for _ in range(args.warm):  # a fresh server's JIT takes thousands of queries
            for p in prepared:
                s.execute_read(lambda tx, p=p: list(tx.run(query, p)))
    for q in questions:
        retriever.search(tenant_id=tenant, query=q)
    print("| phase | fact vector query p50 / p95 ms | whole search p50 / p95 ms |")
    print("|---|---|---|")
    phase(f"before ({args.warm} passes to warm)")
    start = time.perf_counter()
    with driver.session(database=database) as s:
        for value in (False, True):
            for i in range(0, len(ids), args.batch):
                chunk = ids[i : i + args.batch]
                s.execute_write(
                    lambda tx, c=chunk, v=value: tx.run(_FLIP, ids=c, value=v).consume()
                )
    took = time.perf_counter() - start
    phase(f"right after {2 * len(ids):,} index updates ({took:.0f} s)")
    time.sleep(args.settle)
    phase(f"{args.settle} s later")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
