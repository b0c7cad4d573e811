"""Neo4j's vector index with and without quantization: latency and recall of the fact
branch of a search, on the same vectors, side by side.

Neo4j 2026.x builds a vector index with binary quantization unless told otherwise (one bit
per dimension walks the HNSW graph; ``vector.default_search_expansion_factor`` 3 rescores
three times the rows asked for with the full vectors). sgam's indexes are created with
quantization off. This script copies the live FactVector nodes of the tenant that
bench/search_latency.py loads into one scratch label per configuration, builds each
label's index in one go (so every index has the segments of a bulk build; a live
index that grew batch by batch has more, and is slower for it), and runs the bench
questions against every index in turn, the order rotating per question. Recall@50 is
measured against the exact top 50 by cosine over the same vectors (numpy). The scratch
labels and their indexes are deleted at the end.

Load the tenant with real vectors (no ``--synthetic-vectors``): the recall of an HNSW
search over random vectors says nothing about real ones.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/neo4j_vector_quantization.py \
        --store bolt://127.0.0.1:PORT --facts 100000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
from neo4j import GraphDatabase, Session  # noqa: E402
from search_latency import bench_questions, percentiles  # noqa: E402

from graph.embeddings import default_embedder  # noqa: E402

# Scratch label → index configuration (constants: they are spliced into the DDL).
CONFIGS = {
    "BenchVecBinary": "`vector.quantization.enabled`: true",  # Neo4j's default
    "BenchVecFull": "`vector.quantization.enabled`: false",  # sgam's
}
K = 50  # candidates a search takes per index (RankConfig.candidates)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", required=True, help="bolt:// URL of a server holding the tenant")
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    tenant = f"lat-{args.facts}"
    embedder = default_embedder()
    queries = bench_questions(args.facts // 10, args.queries)
    vectors = [[float(x) for x in v] for v in embedder.encode(queries)]
    fetch = K + max(K // 4, 8)  # what a search of the present asks each index for
    driver = GraphDatabase.driver(args.store)
    with driver.session() as s:
        rows = list(
            s.run(
                "MATCH (v:FactVector {tenant_id: $t, live: true}) WHERE v.embedding_model = $m"
                " RETURN v.fact_id AS id, v.embedding AS e",
                t=tenant,
                m=embedder.name,
            )
        )
        if not rows:
            sys.exit(f"no vectors of {embedder.name} in tenant {tenant}: load it first")
        for label, config in CONFIGS.items():
            t = time.perf_counter()
            s.run(
                f"MATCH (v:FactVector {{tenant_id: $t, live: true}}) CALL (v) {{"
                f" CREATE (x:{label}) SET x = properties(v) }} IN TRANSACTIONS OF 5000 ROWS",
                t=tenant,
            ).consume()
            s.run(
                f"CYPHER 25 CREATE VECTOR INDEX bench_{label} IF NOT EXISTS FOR (v:{label})"
                " ON (v.embedding) WITH [v.tenant_id, v.live, v.embedding_model]"
                " OPTIONS {indexConfig: {`vector.dimensions`: $dim,"
                f" `vector.similarity_function`: 'cosine', {config}}}}}",
                dim=embedder.dim,
            ).consume()
            s.run("CALL db.awaitIndexes(3600)").consume()
            built = time.perf_counter() - t
            print(f"{label}: {len(rows)} vectors copied and indexed in {built:.0f}s")
        try:
            found, took = _search(s, tenant, embedder.name, vectors, fetch, args.rounds)
        finally:
            for label in CONFIGS:
                s.run(f"DROP INDEX bench_{label} IF EXISTS").consume()
                s.run(
                    f"MATCH (x:{label}) CALL (x) {{ DELETE x }} IN TRANSACTIONS OF 10000 ROWS"
                ).consume()
    driver.close()

    ids = [r["id"] for r in rows]
    matrix = np.asarray([r["e"] for r in rows], dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    exact = [
        {ids[j] for j in np.argsort(-(matrix @ np.asarray(v, dtype=np.float32)))[:K]}
        for v in vectors
    ]
    print(f"\n{len(rows)} live fact vectors of {tenant}, {len(queries)} questions, LIMIT {fetch}")
    print(f"| index | p50 ms | p95 ms | recall@{K} mean | recall@{K} worst |")
    print("|---|---|---|---|---|")
    for label in CONFIGS:
        recall = [len(e & set(f[:K])) / K for e, f in zip(exact, found[label], strict=True)]
        p50, p95 = percentiles(took[label])
        print(
            f"| {CONFIGS[label]} | {p50:.1f} | {p95:.1f} | {statistics.mean(recall):.3f} |"
            f" {min(recall):.2f} |"
        )
    return 0


def _search(
    session: Session,
    tenant: str,
    model: str,
    vectors: list[list[float]],
    fetch: int,
    rounds: int,
) -> tuple[dict[str, list[list[str]]], dict[str, list[float]]]:
    """Every question against every index in turn; the first round is untimed (warm-up)
    and gives the ids each index found."""
    labels = list(CONFIGS)
    found: dict[str, list[list[str]]] = {label: [] for label in labels}
    took: dict[str, list[float]] = {label: [] for label in labels}
    for r in range(rounds + 1):
        for i, v in enumerate(vectors):
            shift = (i + r) % len(labels)
            for label in labels[shift:] + labels[:shift]:
                t = time.perf_counter()
                result = session.run(
                    f"CYPHER 25 MATCH (v:{label}) SEARCH v IN (VECTOR INDEX bench_{label}"
                    " FOR $q WHERE v.tenant_id = $t AND v.live = true"
                    " AND v.embedding_model = $m LIMIT $k) SCORE AS score RETURN v.fact_id AS id",
                    q=v,
                    t=tenant,
                    m=model,
                    k=fetch,
                )
                hits = [rec["id"] for rec in result]
                if r == 0:
                    found[label].append(hits)
                else:
                    took[label].append(time.perf_counter() - t)
    return found, took


if __name__ == "__main__":
    raise SystemExit(main())
