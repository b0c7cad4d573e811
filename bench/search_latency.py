"""Search latency at 10k and 100k facts, embedding throughput, expansion cost by depth.

A tenant of synthetic people (ten facts each: eight literal attributes, two relations;
one in five timelines has a superseded version) is written once through the service and
kept (SQLite: .sgam/bench/latency-<N>.db; Neo4j: tenant lat-<N>, reused when present).
Then, per run, 50 questions are searched (the full pipeline, limit 10) and p50/p95
reported; the figures are the median of --runs runs. Timings include the query's
embedding. Run from the repository root:

    HF_HUB_OFFLINE=1 .venv/bin/python bench/search_latency.py --facts 10000
    HF_HUB_OFFLINE=1 .venv/bin/python bench/search_latency.py --facts 100000
    HF_HUB_OFFLINE=1 .venv/bin/python bench/search_latency.py --facts 10000 --store bolt://...
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graph.embeddings import default_embedder  # noqa: E402
from graph.model import EpisodeCreate, MemoryDelta  # noqa: E402
from graph.retrieval import ItemKind, Retriever, SearchableStore  # noqa: E402
from graph.service import MemoryService  # noqa: E402
from graph.stores import open_store  # noqa: E402

LITERALS = ["lives_in", "employer_city", "phone_number", "favourite_food", "car",
            "passport_deadline", "shoe_size", "team"]
CITIES = ["Lisbon", "Porto", "Madrid", "Berlin", "Vienna", "Prague", "Oslo", "Dublin"]
FOODS = ["sushi", "lasagne", "falafel", "ramen", "paella", "tacos", "curry", "pierogi"]
CARS = ["Volvo", "Toyota", "Tesla", "Renault", "Skoda", "Fiat", "Kia", "Mazda"]
START = datetime(2024, 1, 1, tzinfo=UTC)
QUESTIONS = [
    "Where does person {i} live?",
    "What is the phone number of person {i}?",
    "Who does person {i} know?",
    "person {i} favourite food",
    "Which company does person {i} work at?",
    "What car does person {i} drive?",
]


def literal(rng: random.Random, predicate: str, i: int) -> object:
    if predicate in ("lives_in", "employer_city"):
        return rng.choice(CITIES)
    if predicate == "phone_number":
        return f"+351 9{rng.randint(10, 99)} {rng.randint(100, 999)} {i % 1000:03d}"
    if predicate == "favourite_food":
        return rng.choice(FOODS)
    if predicate == "car":
        return rng.choice(CARS)
    if predicate == "passport_deadline":
        return (START + timedelta(days=rng.randint(300, 1500))).date().isoformat()
    if predicate == "shoe_size":
        return rng.randint(35, 47)
    return f"team {rng.randint(1, 50)}"


def build(service: MemoryService, tenant: str, facts: int, seed: int = 3) -> None:
    rng = random.Random(seed)
    people = facts // 10
    companies = max(10, people // 50)
    batch: list[MemoryDelta] = []

    def flush() -> None:
        if batch:
            service.write_facts(tenant_id=tenant, deltas=list(batch))
            batch.clear()

    t0 = time.perf_counter()
    for p in range(people):
        pid = f"person-{p}"
        ep = f"ep-{p}"
        at = START + timedelta(days=p % 365, minutes=p)
        service.add_episode(tenant_id=tenant, body=EpisodeCreate(
            episode_id=ep, occurred_at=at,
            content=f"Notes about person {p}: met at the conference, works in sales."))
        for predicate in LITERALS:
            batch.append(MemoryDelta(subject=pid, subject_type="Person", predicate=predicate,
                                     value=literal(rng, predicate, p), valid_from=at,  # type: ignore[arg-type]
                                     source_episode_id=ep))
        batch.append(MemoryDelta(subject=pid, subject_type="Person", predicate="knows",
                                 object=f"person-{rng.randrange(people)}", object_type="Person",
                                 valid_from=at, source_episode_id=ep))
        batch.append(MemoryDelta(subject=pid, subject_type="Person", predicate="works_at",
                                 object=f"company-{rng.randrange(companies)}",
                                 object_type="Company", valid_from=at, source_episode_id=ep))
        if len(batch) >= 500:
            flush()
    flush()
    # One timeline in five gets a later value: superseded versions the window must skip.
    for p in range(0, people, 5):
        at = START + timedelta(days=400 + p % 300)
        ep = f"upd-{p}"
        service.add_episode(tenant_id=tenant, body=EpisodeCreate(
            episode_id=ep, occurred_at=at, content=f"person {p} moved house."))
        batch.append(MemoryDelta(subject=f"person-{p}", predicate="lives_in",
                                 value=rng.choice(CITIES) + " Nord", valid_from=at,
                                 source_episode_id=ep))
        if len(batch) >= 500:
            flush()
    flush()
    print(f"wrote {facts} facts for {people} people in {time.perf_counter() - t0:.0f}s")


def percentiles(samples: Sequence[float]) -> tuple[float, float]:
    xs = sorted(samples)
    p50 = statistics.median(xs)
    p95 = xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
    return p50 * 1000, p95 * 1000


def timed(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--facts", type=int, default=10_000)
    ap.add_argument("--store", default=None, help="default: sqlite under .sgam/bench")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args(argv)

    url = args.store or f"sqlite:///{ROOT}/.sgam/bench/latency-{args.facts}.db"
    store = open_store(url)
    assert isinstance(store, SearchableStore)
    tenant = f"lat-{args.facts}"
    service = MemoryService(store)
    if store.get_episode(tenant_id=tenant, episode_id="ep-0") is None:
        build(service, tenant, args.facts)
    embedder = default_embedder()
    retriever = Retriever(store, embedder=embedder)
    t = time.perf_counter()
    n = retriever.ensure_indexed(tenant)
    if n:
        took = time.perf_counter() - t
        print(f"embedded {n} items in {took:.0f}s ({n / took:.0f}/s)")

    rng = random.Random(11)
    people = args.facts // 10
    queries = [rng.choice(QUESTIONS).format(i=rng.randrange(people)) for _ in range(args.queries)]
    print(f"store {store.url}, tenant {tenant}, {args.queries} queries x {args.runs} runs")

    def run(fn: Callable[[str], object]) -> tuple[float, float]:
        fn(queries[0])  # warm: caches, first-call setup
        p50s, p95s = [], []
        for _ in range(args.runs):
            samples = []
            for q in queries:
                s = time.perf_counter()
                fn(q)
                samples.append(time.perf_counter() - s)
            a, b = percentiles(samples)
            p50s.append(a)
            p95s.append(b)
        return statistics.median(p50s), statistics.median(p95s)

    w = retriever.window
    rows: list[tuple[str, float, float]] = []
    rows.append(("search (full pipeline, depth 1)", *run(
        lambda q: retriever.search(tenant_id=tenant, query=q))))
    for depth in (0, 2, 3):
        rows.append((f"search, expansion depth {depth}", *run(
            lambda q, d=depth: retriever.search(tenant_id=tenant, query=q, depth=d))))
    rows.append(("fulltext only (3 kinds)", *run(lambda q: [
        store.search.fulltext(
            tenant_id=tenant, kind=k, terms=q.lower().split(), window=w(), limit=50
        )
        for k in ItemKind])))
    vec = embedder.encode([queries[0]])[0]
    rows.append(("vector only (3 kinds, query embedded once)", *run(lambda q: [
        store.search.vector_search(tenant_id=tenant, kind=k, vector=vec, model=embedder.name,
                            window=w(), limit=50) for k in ItemKind])))
    rows.append(("query embedding", *run(lambda q: embedder.encode([q]))))
    print("| operation | p50 ms | p95 ms |")
    print("|---|---|---|")
    for name, a, b in rows:
        print(f"| {name} | {a:.1f} | {b:.1f} |")
    texts = [f"person {i} lives in {CITIES[i % 8]} and drives a {CARS[i % 8]}" for i in range(2000)]
    rates = [len(texts) / s for s in timed(lambda: embedder.encode(texts), 3)]
    print(f"embedding throughput: {statistics.median(rates):.0f} fact sentences/s "
          f"(batch 64, CPU)")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
