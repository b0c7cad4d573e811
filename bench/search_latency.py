"""Search and lookup latency at 10k, 100k and 1M facts, load time, peak memory, embedding
throughput, expansion cost by depth.

A tenant of synthetic people (ten facts each: eight literal attributes, two relations;
one in five timelines has a superseded version) is written once through the service and
kept (SQLite: .sgam/bench/latency-<N>.db; Neo4j: tenant lat-<N>, reused when present).
Then, per run, 50 questions are searched (the full pipeline, limit 10) and p50/p95
reported; the figures are the median of --runs runs. Timings include the query's
embedding. Every row is warmed by one untimed pass over the same questions first (figures
taken with an older version warmed with one question only, so their first row also paid
for a cold page cache, which a running service does not). After the model has loaded,
the process freezes its heap as `sgam serve` does. Single-timeline lookups
(``MemoryService.facts(subject=, predicate=)``, the current value) are timed the same way
(p50/p99), beside the store's ``ping`` (one trivial round trip) as a baseline for the
machine's load at the time. Run from the repository root:

    HF_HUB_OFFLINE=1 .venv/bin/python bench/search_latency.py --facts 10000
    HF_HUB_OFFLINE=1 .venv/bin/python bench/search_latency.py --facts 100000
    HF_HUB_OFFLINE=1 .venv/bin/python bench/search_latency.py --facts 10000 --store bolt://...
    HF_HUB_OFFLINE=1 .venv/bin/python bench/search_latency.py --facts 1000000 \
        --synthetic-vectors --server-pid "$(cat .sgam/neo4j/pid)" --store bolt://...

``--synthetic-vectors`` stores a pseudo-random unit vector per item (derived from its text,
under the real model's name) instead of running the model over every item: at 1M facts
(1.24M items) the model would take about an hour here. Queries are still embedded by the
real model, so the vector indexes do the same work; only the relevance of vector hits is
meaningless. ``--server-pid`` names the Neo4j server process whose peak RSS (VmHWM) is
reported; the SQLite store runs inside this process, whose peak RSS is always reported.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import statistics
import sys
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from graph.embeddings import Embedder, Vectors, default_embedder  # noqa: E402
from graph.model import EpisodeCreate, MemoryDelta  # noqa: E402
from graph.retrieval import ItemKind, Retriever, SearchableStore  # noqa: E402
from graph.retrieval.text import terms  # noqa: E402
from graph.service import MemoryService  # noqa: E402
from graph.stores import open_store  # noqa: E402

LITERALS = [
    "lives_in",
    "employer_city",
    "phone_number",
    "favourite_food",
    "car",
    "passport_deadline",
    "shoe_size",
    "team",
]
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
        service.add_episode(
            tenant_id=tenant,
            body=EpisodeCreate(
                episode_id=ep,
                occurred_at=at,
                content=f"Notes about person {p}: met at the conference, works in sales.",
            ),
        )
        for predicate in LITERALS:
            batch.append(
                MemoryDelta(
                    subject=pid,
                    subject_type="Person",
                    predicate=predicate,
                    value=literal(rng, predicate, p),
                    valid_from=at,  # type: ignore[arg-type]
                    source_episode_id=ep,
                )
            )
        batch.append(
            MemoryDelta(
                subject=pid,
                subject_type="Person",
                predicate="knows",
                object=f"person-{rng.randrange(people)}",
                object_type="Person",
                valid_from=at,
                source_episode_id=ep,
            )
        )
        batch.append(
            MemoryDelta(
                subject=pid,
                subject_type="Person",
                predicate="works_at",
                object=f"company-{rng.randrange(companies)}",
                object_type="Company",
                valid_from=at,
                source_episode_id=ep,
            )
        )
        if len(batch) >= 500:
            flush()
        if p % 10_000 == 9_999:
            print(f"  {p + 1} people, {time.perf_counter() - t0:.0f}s", flush=True)
    flush()
    # One timeline in five gets a later value: superseded versions the window must skip.
    for p in range(0, people, 5):
        at = START + timedelta(days=400 + p % 300)
        ep = f"upd-{p}"
        service.add_episode(
            tenant_id=tenant,
            body=EpisodeCreate(episode_id=ep, occurred_at=at, content=f"person {p} moved house."),
        )
        batch.append(
            MemoryDelta(
                subject=f"person-{p}",
                predicate="lives_in",
                value=rng.choice(CITIES) + " Nord",
                valid_from=at,
                source_episode_id=ep,
            )
        )
        if len(batch) >= 500:
            flush()
    flush()
    took = time.perf_counter() - t0
    print(
        f"wrote {facts} facts for {people} people in {took:.0f}s ({facts / took:.0f} facts/s, "
        f"episodes included)",
        flush=True,
    )


class SyntheticEmbedder:
    """Unit vectors derived from each text's CRC, under another model's name: indexes do
    the same work as with real vectors, at a fraction of the model's cost."""

    def __init__(self, name: str, dim: int) -> None:
        self._name, self._dim = name, dim

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def encode(self, texts: Sequence[str]) -> Vectors:
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self._dim)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


class CachedQueries:
    """The real model, each query embedded once: searches timed without the model's share
    (reported on its own row), which a busy machine inflates most."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.cache: dict[tuple[str, ...], Vectors] = {}

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode(self, texts: Sequence[str]) -> Vectors:
        key = tuple(texts)
        if key not in self.cache:
            self.cache[key] = self.inner.encode(texts)
        return self.cache[key]


def peak_rss_mib(pid: int | None = None) -> float:
    """Peak resident set of a process (VmHWM), or of this one."""
    if pid is None:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise ValueError(f"no VmHWM for process {pid}")


def percentile(samples: Sequence[float], q: float) -> float:
    xs = sorted(samples)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))] * 1000


def percentiles(samples: Sequence[float]) -> tuple[float, float]:
    return statistics.median(samples) * 1000, percentile(samples, 0.95)


def bench_questions(people: int, n: int, rng: random.Random | None = None) -> list[str]:
    """n of QUESTIONS about random people of the bench tenant; the same n every time
    unless ``rng`` is given (then drawn from it, which moves on)."""
    rng = rng or random.Random(11)
    return [rng.choice(QUESTIONS).format(i=rng.randrange(people)) for _ in range(n)]


def interleaved(
    variants: Mapping[str, Callable[[str], object]], queries: Sequence[str], rounds: int
) -> dict[str, list[float]]:
    """Each query through every variant in turn, the order rotating per query and round,
    after one untimed pass over all of them: every variant sees the same machine load.
    Returns each variant's timings (seconds), and prints the load average around them."""
    names = list(variants)
    for q in queries:  # warm every path: page cache, plan cache, JIT
        for name in names:
            variants[name](q)
    samples: dict[str, list[float]] = {name: [] for name in names}
    print(f"load average {os.getloadavg()[0]:.1f} at start")
    for r in range(rounds):
        for i, q in enumerate(queries):
            shift = (i + r) % len(names)
            for name in names[shift:] + names[:shift]:
                s = time.perf_counter()
                variants[name](q)
                samples[name].append(time.perf_counter() - s)
    print(f"load average {os.getloadavg()[0]:.1f} at end, {rounds} x {len(queries)} each\n")
    return samples


def print_against_first(column: str, samples: Mapping[str, Sequence[float]]) -> None:
    """p50/p95 of each variant and its ratio to the first, as a Markdown table."""
    names = list(samples)
    base50, base95 = percentiles(samples[names[0]])
    print(f"| {column} | p50 ms | p95 ms | p50 / first | p95 / first |")
    print("|---|---|---|---|---|")
    for name in names:
        p50, p95 = percentiles(samples[name])
        print(f"| {name} | {p50:.1f} | {p95:.1f} | {p50 / base50:.2f} | {p95 / base95:.2f} |")


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
    ap.add_argument("--lookups", type=int, default=500, help="single-timeline lookups a run")
    ap.add_argument(
        "--synthetic-vectors",
        action="store_true",
        help="index pseudo-random vectors instead of running the model",
    )
    ap.add_argument(
        "--server-pid",
        type=int,
        default=None,
        help="the Neo4j server's pid, to report its peak RSS",
    )
    ap.add_argument("--load-only", action="store_true", help="write and index, then stop")
    ap.add_argument("--no-depths", action="store_true", help="skip expansion depths 0, 2, 3")
    ap.add_argument(
        "--lookups-only", action="store_true", help="time the single-timeline lookups only"
    )
    ap.add_argument(
        "--cold",
        action="store_true",
        help="SQLite: drop the database file from the OS page cache before timing"
        " (posix_fadvise DONTNEED): the worst case, a cache that holds none of it",
    )
    ap.add_argument(
        "--resident",
        action="store_true",
        help="SQLite: read the database file through before timing, so the OS page cache"
        " holds all of it, as it does for a long-running server with RAM >= the file",
    )
    args = ap.parse_args(argv)

    url = args.store or f"sqlite:///{ROOT}/.sgam/bench/latency-{args.facts}.db"
    store = open_store(url)
    assert isinstance(store, SearchableStore)
    tenant = f"lat-{args.facts}"
    service = MemoryService(store)
    print(f"load average {os.getloadavg()[0]:.1f} at start", flush=True)
    if store.get_episode(tenant_id=tenant, episode_id="ep-0") is None:
        build(service, tenant, args.facts)
    embedder = default_embedder()
    embedder.encode(["load the model"])
    # As `sgam serve` does once the model has loaded (api/server.py, freeze_startup_heap):
    # the model's ~0.5M objects leave the cyclic GC's sight, or every few searches a full
    # collection walks them all (~250 ms here), which is what p95 measured before.
    gc.collect()
    gc.freeze()
    retriever = Retriever(store, embedder=embedder)
    t = time.perf_counter()
    if args.synthetic_vectors:
        fake = SyntheticEmbedder(embedder.name, embedder.dim)
        n = store.search.index_pending(tenant_id=tenant, embedder=fake, batch_size=2048)
    else:
        n = retriever.ensure_indexed(tenant)
    if n:
        took = time.perf_counter() - t
        kind = "synthetic vectors for" if args.synthetic_vectors else "embedded"
        print(f"{kind} {n} items in {took:.0f}s ({n / took:.0f}/s)", flush=True)
    if args.load_only:
        store.close()
        return 0

    rng = random.Random(11)
    people = args.facts // 10
    queries = bench_questions(people, args.queries, rng)  # the lookups draw on after them
    print(f"store {store.url}, tenant {tenant}, {args.queries} queries x {args.runs} runs")
    if args.cold:
        evict(url)
    if args.resident:
        read_through(url)
    if not args.lookups_only:
        search_rows(args, store, tenant, retriever, embedder, queries)
    lookup_rows(args, service, store, tenant, people, rng)
    if not args.lookups_only:
        texts = [
            f"person {i} lives in {CITIES[i % 8]} and drives a {CARS[i % 8]}" for i in range(2000)
        ]
        rates = [len(texts) / s for s in timed(lambda: embedder.encode(texts), 3)]
        print(
            f"embedding throughput: {statistics.median(rates):.0f} fact sentences/s (batch 64, CPU)"
        )
    store.close()
    return 0


def sqlite_files(url: str) -> list[Path]:
    if not url.startswith("sqlite:///"):
        raise SystemExit("--cold and --resident are for a SQLite store")
    path = Path(url.removeprefix("sqlite:///"))
    return [p for p in (path, path.with_name(path.name + "-wal")) if p.exists()]


def evict(url: str) -> None:
    """Ask the OS to drop the store's files from its page cache (clean pages go at once)."""
    for p in sqlite_files(url):
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    print("dropped the store's files from the OS page cache")


def read_through(url: str) -> None:
    """Read the SQLite file (and its log) once, so that the OS page cache holds them; the
    timings then measure the store's own work, not this VM's disk (a file the size of the
    1M tenant's, 4.5 GB, is partly evicted by the time a bench runs)."""
    t, total = time.perf_counter(), 0
    for p in sqlite_files(url):
        with p.open("rb", buffering=0) as f:
            while chunk := f.read(16 << 20):
                total += len(chunk)
    print(f"read {total / 2**20:.0f} MiB of the store's files in {time.perf_counter() - t:.1f} s")


def search_rows(
    args: argparse.Namespace,
    store: SearchableStore,
    tenant: str,
    retriever: Retriever,
    embedder: Embedder,
    queries: Sequence[str],
) -> None:
    """The search rows: full pipeline, cached query embedding, depths, each index alone."""

    def run(fn: Callable[[str], object]) -> tuple[float, float]:
        for q in queries:  # warm: page cache, per-tenant caches, first-call setup
            fn(q)
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
    rows.append(
        (
            "search (full pipeline, depth 1)",
            *run(lambda q: retriever.search(tenant_id=tenant, query=q)),
        )
    )
    cached = Retriever(store, embedder=CachedQueries(embedder))
    rows.append(
        ("search, query embedding cached", *run(lambda q: cached.search(tenant_id=tenant, query=q)))
    )
    for depth in () if args.no_depths else (0, 2, 3):
        rows.append(
            (
                f"search, expansion depth {depth}",
                *run(lambda q, d=depth: retriever.search(tenant_id=tenant, query=q, depth=d)),
            )
        )
    rows.append(
        (
            "fulltext only (3 kinds)",
            *run(
                lambda q: [
                    store.search.fulltext(
                        tenant_id=tenant, kind=k, terms=terms(q), window=w(), limit=50
                    )
                    for k in ItemKind
                ]
            ),
        )
    )
    vec = embedder.encode([queries[0]])[0]
    rows.append(
        (
            "vector only (3 kinds, query embedded once)",
            *run(
                lambda q: [
                    store.search.vector_search(
                        tenant_id=tenant,
                        kind=k,
                        vector=vec,
                        model=embedder.name,
                        window=w(),
                        limit=50,
                    )
                    for k in ItemKind
                ]
            ),
        )
    )
    rows.append(("query embedding", *run(lambda q: embedder.encode([q]))))
    print("| operation | p50 ms | p95 ms |")
    print("|---|---|---|")
    for name, a, b in rows:
        print(f"| {name} | {a:.1f} | {b:.1f} |")
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)

    # Single-timeline lookups: one person's current value of one attribute, beside a ping.


def lookup_rows(
    args: argparse.Namespace,
    service: MemoryService,
    store: SearchableStore,
    tenant: str,
    people: int,
    rng: random.Random,
) -> None:
    """Single-timeline lookups (one person's current value of one attribute), p50/p99,
    beside the store's ping, then the peak RSS."""
    now = datetime.now(UTC)

    def lookup() -> object:
        p = rng.randrange(people)
        return service.facts(
            tenant_id=tenant,
            subject=f"person-{p}",
            predicate=LITERALS[p % len(LITERALS)],
            as_of=now,
        )

    assert len(service.facts(tenant_id=tenant, subject="person-1", predicate="car")) == 1
    lrows: list[tuple[str, float, float]] = []
    for name, fn in (("single-timeline lookup", lookup), ("ping (baseline)", store.ping)):
        timed(fn, 50)  # warm
        p50s, p99s = [], []
        for _ in range(args.runs):
            samples = timed(fn, args.lookups)
            p50s.append(statistics.median(samples) * 1000)
            p99s.append(percentile(samples, 0.99))
        lrows.append((name, statistics.median(p50s), statistics.median(p99s)))
    print("| operation | p50 ms | p99 ms |")
    print("|---|---|---|")
    for name, a, b in lrows:
        print(f"| {name} | {a:.2f} | {b:.2f} |")
    print(
        f"load average {os.getloadavg()[0]:.1f}; peak RSS: this process {peak_rss_mib():.0f} MiB",
        end="",
    )
    if args.server_pid:
        print(f", Neo4j server {peak_rss_mib(args.server_pid):.0f} MiB", end="")
    print(flush=True)


if __name__ == "__main__":
    sys.exit(main())
