"""The embedded store's vector prefilter (graph/stores/sqlite/vectors.py): its recall on
real vectors, and its speed on a loaded tenant.

Speed: the tenant's fact matrix as the store caches it; the first batch a search asks of
``best_rows`` (200 rows), exact and through the prefilter, interleaved call by call, and
the prefilter's parts (distances, the pool's cut, the pool's cosines). p50 of --calls.

Recall (``--recall N``): N fact texts of the tenant embedded by the real model (kept in
.sgam/bench/ for later runs); for 50 of bench/search_latency.py's questions, the share of
the exact top 64 that the pool and its rescoring keep, at several pool sizes (the store
uses n/12, at least 4,096). Needs the tenant that search_latency.py loads:

    HF_HUB_OFFLINE=1 .venv/bin/python bench/vector_prefilter.py --facts 100000 [--recall 30000]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
from search_latency import bench_questions  # noqa: E402

from graph.embeddings import SentenceEmbedder  # noqa: E402
from graph.retrieval import ItemKind, Retriever  # noqa: E402
from graph.stores.sqlite import vectors  # noqa: E402
from graph.stores.sqlite.store import SqliteStore  # noqa: E402


def p50_ms(fn: Callable[[], object], calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def speed(store: SqliteStore, tenant: str, calls: int) -> None:
    model = SentenceEmbedder().name
    rng = np.random.default_rng(1)
    query = rng.standard_normal(384).astype(np.float32)
    query /= np.linalg.norm(query)
    window = Retriever.window()
    store.search.vector_search(
        tenant_id=tenant, kind=ItemKind.FACT, vector=query, model=model, window=window, limit=50
    )  # loads the matrix into the cache
    m = store.search._vectors.get((tenant, ItemKind.FACT.value, model))
    assert m is not None, "no vectors: run bench/search_latency.py --load-only first"
    n = len(m.item_ids)
    exact_up_to = vectors.EXACT_UP_TO
    times: dict[str, list[float]] = {"exact": [], "prefilter": []}
    for _ in range(calls):
        for name, limit in (("exact", 1 << 62), ("prefilter", exact_up_to)):
            vectors.EXACT_UP_TO = limit
            start = time.perf_counter()
            next(vectors.best_rows(m, query, 200))
            times[name].append(time.perf_counter() - start)
    vectors.EXACT_UP_TO = exact_up_to
    exact, pre = (statistics.median(times[k]) * 1000 for k in ("exact", "prefilter"))
    size = vectors.pool_size(n, 200)
    distance = vectors.distances(m.bits, query)
    pool = vectors.closest(distance, size)
    print(f"fact vectors of {tenant}: {n:,} rows, pool {size:,}; p50 of {calls} calls, ms")
    print("| first batch (200 rows), exact | prefilter | prefilter / exact |")
    print("|---|---|---|")
    print(f"| {exact:.2f} | {pre:.2f} | {pre / exact:.2f} |")
    print(
        f"parts: distances {p50_ms(lambda: vectors.distances(m.bits, query), calls):.2f}, "
        f"pool cut {p50_ms(lambda: vectors.closest(distance, size), calls):.2f} "
        f"(a partial sort: {p50_ms(lambda: np.argpartition(distance, size - 1), calls):.2f}), "
        f"cosines {p50_ms(lambda: vectors.cosines(m.matrix, pool, query), calls):.2f} "
        f"(copied out at once: {p50_ms(lambda: m.matrix[pool] @ query, calls):.2f})"
    )


def recall(db: Path, tenant: str, sample: int) -> None:
    cache = ROOT / ".sgam" / "bench" / f"real-fact-vectors-{tenant}-{sample}.npy"
    embedder = SentenceEmbedder()
    if cache.exists():
        matrix = np.load(cache)
    else:
        with sqlite3.connect(db) as conn:
            texts = [
                r[0]
                for r in conn.execute(
                    "SELECT body FROM search_docs WHERE tenant_id = ? AND kind = 'fact'"
                    " ORDER BY doc LIMIT ?",
                    (tenant, sample),
                )
            ]
        start = time.perf_counter()
        matrix = embedder.encode(texts)
        print(f"embedded {len(texts):,} fact texts in {time.perf_counter() - start:.0f}s")
        np.save(cache, matrix)
    questions = bench_questions(int(tenant.rsplit("-", 1)[1]) // 10, 50, random.Random(3))
    queries = embedder.encode(questions)
    bits = vectors.sign_bits(matrix)
    n = matrix.shape[0]
    print(f"\nrecall of the exact top 64, {n:,} real vectors, 50 questions")
    print("| pool | rows | mean | worst |")
    print("|---|---|---|---|")
    for label, size in (("n/30", n // 30), ("n/15", n // 15), ("n/12", n // 12), ("n/7", n // 7)):
        kept = []
        for q in queries:
            exact = set(np.argsort(-(matrix @ q), kind="stable")[:64].tolist())
            pool = vectors.closest(vectors.distances(bits, q), size)
            scores = vectors.cosines(matrix, pool, q)
            found = set(pool[np.argsort(-scores, kind="stable")[:64]].tolist())
            kept.append(len(exact & found) / 64)
        print(f"| {label} | {size:,} | {statistics.mean(kept):.3f} | {min(kept):.3f} |")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--recall", type=int, default=0, help="fact texts to embed (0: skip)")
    args = ap.parse_args(argv)
    db = ROOT / ".sgam" / "bench" / f"latency-{args.facts}.db"
    tenant = f"lat-{args.facts}"
    store = SqliteStore(db)
    try:
        speed(store, tenant, args.calls)
    finally:
        store.close()
    if args.recall:
        recall(db, tenant, args.recall)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
