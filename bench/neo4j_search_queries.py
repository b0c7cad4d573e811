"""Each query of a gathered Neo4j search, timed alone, optionally against another version
of the templates on the same data.

Runs --queries searches of the bench tenant (bench/search_latency.py writes it), records
the parameters of every query they send (search.gather_candidates, search.gather_expansion,
search.staleness), then replays each query with those parameters --rounds times
in its own read transaction and reports p50 / p95 (client time: the query, sending its
rows and the driver unpacking them). With --against DIR (a cypher/ folder of another
checkout, e.g. a `git worktree` of main) both versions run alternately on the same
parameters, and the ratio new / old is printed: a template change measured without the
rest of the search, which this machine's noise otherwise hides. The parameters come from
this checkout's search; the other version must take the same ones. Run from the
repository root:

    HF_HUB_OFFLINE=1 .venv/bin/python bench/neo4j_search_queries.py --store bolt://... \
        --facts 100000 [--against ../main/cypher]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from search_latency import bench_questions  # noqa: E402

from graph.embeddings import default_embedder  # noqa: E402
from graph.retrieval import Retriever, SearchableStore  # noqa: E402
from graph.stores import open_store  # noqa: E402
from graph.stores.neo4j.connection import Neo4jConnection  # noqa: E402
from graph.stores.neo4j.templates import load_templates  # noqa: E402

GATHERED = ("search.gather_candidates", "search.gather_expansion", "search.staleness")


def capture(store: SearchableStore, tenant: str, people: int, n: int) -> list[tuple[str, Any]]:
    """The (template, parameters) of every gathered query of n searches."""
    seen: list[tuple[str, Any]] = []
    real = Neo4jConnection.run

    def spy(self: Neo4jConnection, name: str, params: Any, **kw: Any) -> Any:
        if name in GATHERED:
            seen.append((name, dict(params)))
        return real(self, name, params, **kw)

    retriever = Retriever(store, embedder=default_embedder())
    questions = bench_questions(people, n)
    Neo4jConnection.run = spy  # type: ignore[method-assign]
    try:
        for q in questions:
            retriever.search(tenant_id=tenant, query=q)
    finally:
        Neo4jConnection.run = real  # type: ignore[method-assign]
    return seen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", required=True, help="bolt:// or neo4j:// URL")
    ap.add_argument("--facts", type=int, default=100_000, help="the bench tenant lat-<N>")
    ap.add_argument("--queries", type=int, default=30, help="searches whose queries are replayed")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--against", type=Path, default=None, help="another cypher/ folder")
    args = ap.parse_args()

    store = open_store(args.store)
    assert isinstance(store, SearchableStore)
    conn: Neo4jConnection = store.conn  # type: ignore[attr-defined]
    seen = capture(store, f"lat-{args.facts}", args.facts // 10, args.queries)
    sides = {"this": load_templates()}
    if args.against is not None:
        sides["against"] = load_templates(args.against)
    times: dict[tuple[str, str], list[float]] = {}
    with conn.driver.session(database=conn.database) as session:
        for _ in range(args.rounds):
            for side, templates in sides.items():
                for name, params in seen:
                    text = templates[name].statements[0]
                    t = time.perf_counter()
                    session.execute_read(
                        lambda tx, q=text, p=params: [dict(r) for r in tx.run(q, p)]
                    )
                    times.setdefault((name, side), []).append(time.perf_counter() - t)
    store.close()

    def pct(xs: list[float], q: float) -> float:
        xs = sorted(xs)
        return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))] * 1000

    print(f"{args.queries} searches, {args.rounds} rounds; client ms")
    print(
        "| query | runs | "
        + " | ".join(f"{s} p50 / p95" for s in sides)
        + (" | ratio p50 / p95 |" if len(sides) > 1 else " |")
    )
    print("|---" * (2 + len(sides) + (len(sides) > 1)) + "|")
    for name in GATHERED:
        rows = [times.get((name, s), []) for s in sides]
        if not rows[0]:
            continue
        figs = [(statistics.median(x) * 1000, pct(x, 0.95)) for x in rows]
        cells = " | ".join(f"{a:.1f} / {b:.1f}" for a, b in figs)
        ratio = ""
        if len(figs) > 1:
            ratio = f" | {figs[0][0] / figs[1][0]:.2f} / {figs[0][1] / figs[1][1]:.2f}"
        print(f"| {name} | {len(rows[0])} | {cells}{ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
