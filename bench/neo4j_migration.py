"""The Neo4j fulltext migration (per-tenant terms) on a loaded tenant: how long it takes.

Turns the tenant that bench/search_latency.py loads back into the layout before the
per-tenant terms (no ``terms``, a ``scope`` token, the old fulltext indexes), then times
``Neo4jSearch.migrate()`` with the batch size given, split into the fact versions and the
entities and episodes. ``--code DIR`` imports ``graph`` from another checkout, to time an
older migration on the same data. ``--vectors`` leaves the fulltext layout alone and times
the move of fact vectors off the versions onto FactVector nodes, on a server that a
checkout from before them loaded. Run from the repository root:

    HF_HUB_OFFLINE=1 .venv/bin/python bench/neo4j_migration.py --store "$NEO4J_URI" \
        --facts 100000 --batch 1000 [--code ../base] [--vectors]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

OLD_INDEXES = [
    "CREATE FULLTEXT INDEX entity_text FOR (e:Entity) ON EACH [e.name, e.aliases, e.scope]",
    "CREATE FULLTEXT INDEX fact_text FOR ()-[r:FACT]-() "
    "ON EACH [r.fact_text, r.scope, r.scope_current]",
    "CREATE FULLTEXT INDEX episode_text FOR (e:Episode) ON EACH [e.content_text, e.scope]",
]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", required=True, help="bolt:// or neo4j:// URI")
    ap.add_argument("--facts", type=int, default=100_000, help="which lat-N tenant")
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--code", type=Path, default=ROOT, help="checkout to import graph from")
    ap.add_argument("--vectors", action="store_true", help="time the fact vector move only")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(args.code.resolve()))

    from graph.stores import open_store
    from graph.stores.neo4j import search as neo4j_search

    store = open_store(args.store)
    search = store.search  # type: ignore[attr-defined]
    if not args.vectors:
        search.init()
    tenant = f"lat-{args.facts}"
    driver, database = store.conn.driver, store.conn.database  # type: ignore[attr-defined]
    scope = "t" + tenant.replace("_", "_u").replace("-", "_h")
    to_old_layout = (
        "MATCH ()-[r:FACT {tenant_id: $t}]->() CALL (r) { REMOVE r.terms, r.terms_current "
        "SET r.scope = $scope, r.scope_current = CASE WHEN r.current THEN $scope END } "
        "IN TRANSACTIONS OF 10000 ROWS",
        "MATCH (e:Entity {tenant_id: $t}) CALL (e) { REMOVE e.terms SET e.scope = $scope } "
        "IN TRANSACTIONS OF 10000 ROWS",
        "MATCH (e:Episode {tenant_id: $t}) CALL (e) { REMOVE e.terms SET e.scope = $scope } "
        "IN TRANSACTIONS OF 10000 ROWS",
        "DROP INDEX entity_text IF EXISTS",
        "DROP INDEX fact_text IF EXISTS",
        "DROP INDEX episode_text IF EXISTS",
        *OLD_INDEXES,
        "CALL db.awaitIndexes(3000)",
    )
    t = time.perf_counter()
    for q in () if args.vectors else to_old_layout:
        with driver.session(database=database) as session:
            session.run(q, t=tenant, scope=scope).consume()  # type: ignore[arg-type]
    if not args.vectors:
        print(f"tenant {tenant} back in the old layout in {time.perf_counter() - t:.0f}s")

    neo4j_search._BACKFILL_BATCH = args.batch
    if args.vectors:
        neo4j_search._MOVE_BATCH = args.batch
    phases: dict[str, float] = {}
    run = search.conn.run

    def timed_run(name: str, *a: object, **kw: object) -> object:
        s = time.perf_counter()
        try:
            return run(name, *a, **kw)
        finally:
            phase = (
                "vectors"
                if "vector" in name
                else "facts"
                if "fact" in name
                else "nodes"
                if "backfill" in name or ("node_terms" in name)
                else "indexes"
            )
            phases[phase] = phases.get(phase, 0.0) + time.perf_counter() - s

    search.conn.run = timed_run
    t = time.perf_counter()
    assert search.migrate() is True
    total = time.perf_counter() - t
    search.conn.run = run
    print(
        f"code {args.code}, batch {args.batch}: migrate() {total:.1f}s — "
        + ", ".join(f"{k} {v:.1f}s" for k, v in sorted(phases.items()))
    )
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
