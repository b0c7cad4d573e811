"""Ingest rate, three ways on one workload in one process (not part of the test run).

The workload: ``--facts`` deltas (default 100,000) over ``--facts / 5`` subjects x 5
attributes. Each delta picks a (subject, attribute) at random (seeded), so timelines get
zero, one or several values; 90% carry a valid_from later than every delta before them,
10% arrive late, with a valid_from drawn uniformly from the past of the stream (they cut
an earlier interval or slot in before every interval of their timeline). No two deltas
of one timeline share a valid_from, so no conflict policy is ever needed. A delta cites
one of ``--facts / 100`` source episodes.

1. ``seed``: the reference write path of the article sgam grew out of, written here from
   its description. One table of intervals (``fact_id INTEGER PRIMARY KEY``, tenant,
   subject, attribute, value, ``valid_from``/``valid_to`` as fixed-width UTC text, source
   episode; a CHECK that an interval is not empty) and a partial unique index on
   (tenant, subject, attribute) ``WHERE valid_to IS NULL``: one open row per timeline.
   ``replace_fact`` runs one transaction per fact: refuse an equal valid_from; find the
   interval containing the new start and close it there, the new row inheriting its end;
   otherwise the new row ends where the next interval begins (a late fact before every
   interval), or stays open. Its lookups filter on (tenant, subject, attribute,
   valid_from), which the partial index cannot serve: as published, every lookup scans
   the table and the reference grows quadratically (148 facts/s at 20k facts here, hours
   for 100k). So by default the table also gets the index any deployment would add,
   (tenant, subject, attribute, valid_from), the one change to the article's design;
   ``--seed-as-published`` leaves it out.
2. ``raw``: the same rows inserted with ``executemany`` in batches of ``--batch`` into a
   table indexed on (tenant, subject, attribute, valid_from), one commit per batch, no
   temporal logic at all: the physical limit of SQLite for these rows.
3. ``sgam``: ``MemoryService.write_facts`` on the embedded SQLite store in batches of
   ``--batch`` (one transaction each, every decision of the temporal core, versions,
   ledger entries, entities, mentions). The source episodes are stored before the clock
   starts. With ``--store bolt://…`` the same runs on Neo4j too (a fresh tenant each run,
   purged afterwards).

All three SQLite databases are fresh files in one temporary directory per run, with
sgam's own settings (WAL, ``synchronous = NORMAL``), so commits cost the same. The three
(four) methods run one after another within each run, in an order rotated run by run, so
every method sees the same machine load; each rate is the median of ``--runs``. The first
run checks that sgam and the seed reference end with the same intervals.

    .venv/bin/python bench/ingest_three_way.py [--facts 100000] [--runs 3] [--batch 1000]
        [--seed-as-published] [--store bolt://127.0.0.1:7687] [--profile 20000]
        [--floor] [--jsonl FILE]

``--floor`` also replays, after sgam in each run, the rows sgam wrote (versions, ledger
entries, fact search documents, entities, mentions) with plain ``executemany`` into a
fresh file of sgam's layout, one transaction per batch: SQLite's own cost for those rows,
a lower bound for sgam on this layout.

``--jsonl FILE`` writes the workload as ``sgam import`` input (an episode line, then its
100 deltas as one facts line) and exits.

``--profile N`` instead runs N facts of the workload through sgam on SQLite under
cProfile (CPU time) and prints the top functions by cumulative and by own time.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graph import (  # noqa: E402
    EpisodeCreate,
    EpisodeKind,
    FactQuery,
    MemoryDelta,
    MemoryService,
    Store,
    open_store,
)
from graph.stores.sqlite.terms import register as register_terms  # noqa: E402

T0 = datetime(2025, 1, 1, tzinfo=UTC)
ATTRIBUTES = ("status", "tier", "city", "employer", "phone")
TENANT = "bench"
FACTS_PER_EPISODE = 100
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Took:
    """Wall time, and this process's CPU time (SQLite works in-process, so it counts)."""

    wall: float
    cpu: float


class Stopwatch:
    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def stop(self) -> Took:
        return Took(time.perf_counter() - self.wall, time.process_time() - self.cpu)


# -- the workload ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Delta:
    subject: str
    attribute: str
    value: str
    valid_from: datetime
    episode_id: str


def workload(n: int, *, late: float = 0.10, seed: int = 11) -> list[Delta]:
    """``n`` deltas over ``n // 5`` subjects x 5 attributes; ``late`` of them arrive late."""
    rng = random.Random(seed)
    subjects = max(1, n // len(ATTRIBUTES))
    used: set[tuple[str, str, datetime]] = set()
    out: list[Delta] = []
    for i in range(n):
        subject = f"s{rng.randrange(subjects):06d}"
        attribute = rng.choice(ATTRIBUTES)
        if i > 0 and rng.random() < late:
            at = T0 + timedelta(seconds=rng.uniform(0, i))
        else:
            at = T0 + timedelta(seconds=i)
        while (subject, attribute, at) in used:  # one start per timeline: never a conflict
            at += timedelta(microseconds=1)
        used.add((subject, attribute, at))
        out.append(Delta(subject, attribute, f"v{i}", at, f"ep-{i // FACTS_PER_EPISODE:05d}"))
    return out


def db_time(t: datetime) -> str:
    """Fixed-width UTC text: string order is time order (as the seed's ISO strings)."""
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA journal_mode = WAL")  # sgam's settings, so a commit costs the same
    db.execute("PRAGMA synchronous = NORMAL")
    return db


# -- 1. the seed reference -----------------------------------------------------------------
SEED_SCHEMA = """
create table memory_facts (
    fact_id integer primary key,
    tenant_id text not null,
    subject text not null,
    attribute text not null,
    value text not null,
    valid_from text not null,
    valid_to text,
    source_episode_id text not null,
    check (valid_to is null or valid_from < valid_to)
);
create unique index one_open_fact
on memory_facts (tenant_id, subject, attribute)
where valid_to is null;
"""
SEED_LOOKUP_INDEX = (
    "create index memory_facts_lookup on memory_facts (tenant_id, subject, attribute, valid_from)"
)


@dataclass(frozen=True, slots=True)
class MemoryFact:
    tenant_id: str
    subject: str
    attribute: str
    value: str
    valid_from: str
    source_episode_id: str


def replace_fact(db: sqlite3.Connection, fact: MemoryFact) -> None:
    """The reference write: one transaction per fact."""
    with db:
        exact = db.execute(
            """
            select fact_id
            from memory_facts
            where tenant_id = ? and subject = ? and attribute = ? and valid_from = ?
            """,
            (fact.tenant_id, fact.subject, fact.attribute, fact.valid_from),
        ).fetchone()
        if exact:
            raise ValueError("equal valid_from requires an application conflict policy")
        containing = db.execute(
            """
            select fact_id, valid_to
            from memory_facts
            where tenant_id = ? and subject = ? and attribute = ?
              and valid_from < ? and (valid_to is null or valid_to > ?)
            limit 1
            """,
            (fact.tenant_id, fact.subject, fact.attribute, fact.valid_from, fact.valid_from),
        ).fetchone()
        if containing:
            db.execute(
                "update memory_facts set valid_to = ? where fact_id = ?",
                (fact.valid_from, containing["fact_id"]),
            )
            successor_boundary = containing["valid_to"]
        else:
            successor = db.execute(
                """
                select valid_from
                from memory_facts
                where tenant_id = ? and subject = ? and attribute = ? and valid_from > ?
                order by valid_from
                limit 1
                """,
                (fact.tenant_id, fact.subject, fact.attribute, fact.valid_from),
            ).fetchone()
            successor_boundary = successor["valid_from"] if successor else None
        db.execute(
            """
            insert into memory_facts
                (tenant_id, subject, attribute, value, valid_from, valid_to, source_episode_id)
            values (?, ?, ?, ?, ?, ?, ?)
            """,
            (
                fact.tenant_id,
                fact.subject,
                fact.attribute,
                fact.value,
                fact.valid_from,
                successor_boundary,
                fact.source_episode_id,
            ),
        )


def run_seed(deltas: Sequence[Delta], path: Path, *, lookup_index: bool) -> Took:
    db = connect(path)
    db.executescript(SEED_SCHEMA)
    if lookup_index:
        db.execute(SEED_LOOKUP_INDEX)
    facts = [
        MemoryFact(TENANT, d.subject, d.attribute, d.value, db_time(d.valid_from), d.episode_id)
        for d in deltas
    ]
    clock = Stopwatch()
    for f in facts:
        replace_fact(db, f)
    took = clock.stop()
    db.close()
    return took


def seed_intervals(path: Path) -> set[tuple[str, str, str, str, str | None]]:
    db = connect(path)
    rows = db.execute(
        "select subject, attribute, value, valid_from, valid_to from memory_facts"
    ).fetchall()
    db.close()
    return {(r[0], r[1], r[2], r[3], r[4]) for r in rows}


# -- 2. raw batched insert -------------------------------------------------------------------
RAW_SCHEMA = """
create table facts (
    fact_id integer primary key,
    tenant_id text not null,
    subject text not null,
    attribute text not null,
    value text not null,
    valid_from text not null,
    valid_to text,
    source_episode_id text not null
);
create index facts_lookup on facts (tenant_id, subject, attribute, valid_from);
"""


def run_raw(deltas: Sequence[Delta], path: Path, *, batch: int) -> Took:
    db = connect(path)
    db.executescript(RAW_SCHEMA)
    rows = [
        (TENANT, d.subject, d.attribute, d.value, db_time(d.valid_from), None, d.episode_id)
        for d in deltas
    ]
    clock = Stopwatch()
    for chunk in chunks(rows, batch):
        with db:
            db.executemany(
                "insert into facts (tenant_id, subject, attribute, value, valid_from, valid_to,"
                " source_episode_id) values (?, ?, ?, ?, ?, ?, ?)",
                chunk,
            )
    took = clock.stop()
    db.close()
    return took


# -- 3. sgam ---------------------------------------------------------------------------------
def sgam_deltas(deltas: Sequence[Delta]) -> list[MemoryDelta]:
    """The workload as API deltas: built before the clock starts, as a request body is
    parsed before the service is called."""
    return [
        MemoryDelta(
            subject=d.subject,
            predicate=d.attribute,
            value=d.value,
            valid_from=d.valid_from,
            source_episode_id=d.episode_id,
        )
        for d in deltas
    ]


def store_episodes(service: MemoryService, tenant: str, deltas: Sequence[Delta]) -> None:
    first: dict[str, datetime] = {}
    for d in deltas:
        first.setdefault(d.episode_id, T0 + timedelta(seconds=len(first) * FACTS_PER_EPISODE))
    for eid, at in first.items():
        service.add_episode(
            tenant_id=tenant,
            body=EpisodeCreate(
                episode_id=eid, kind=EpisodeKind.EVENT, content=f"sync {eid}", occurred_at=at
            ),
        )


def run_sgam(store: Store, deltas: Sequence[MemoryDelta], tenant: str, *, batch: int) -> Took:
    service = MemoryService(store)
    clock = Stopwatch()
    for chunk in chunks(deltas, batch):
        service.write_facts(tenant_id=tenant, deltas=chunk)
    return clock.stop()


def sgam_intervals(store: Store, tenant: str) -> set[tuple[str, str, str, str, str | None]]:
    """Every interval currently believed, at any valid time, through the store's port."""
    now = datetime.now(UTC)
    out: set[tuple[str, str, str, str, str | None]] = set()
    after: tuple[str, str, str] | None = None
    while True:
        page = store.facts(
            tenant_id=tenant, query=FactQuery(as_of=None, known_at=now, limit=1000, after=after)
        )
        for f in page:
            end = db_time(f.valid_to) if f.valid_to is not None else None
            out.add((f.subject, f.predicate, str(f.value), db_time(f.valid_from), end))
        if len(page) < 1000:
            return out
        last = page[-1]
        after = (last.subject, last.predicate, last.fact_id)


def run_floor(store: Store, path: Path, tenant: str, n: int, *, batch: int) -> Took:
    """SQLite's own cost for the rows sgam wrote: every version, ledger entry, fact search
    document, entity and mention of ``store``'s tenant, replayed with ``executemany`` into
    a fresh file of the same layout in ``n / batch`` transactions, with no Python logic,
    no reads and no retirements (so a lower bound of sgam's write on this layout)."""
    src = sqlite3.connect(getattr(store, "path"))  # noqa: B009  # SqliteStore only
    tables = {
        "facts": "SELECT * FROM facts WHERE tenant_id = ? ORDER BY rowid",
        "assertions": "SELECT tenant_id, timeline_key, seq, kind, fact_id, recorded_at,"
        " valid_from, valid_to, source_episode_id, payload FROM assertions"
        " WHERE tenant_id = ? ORDER BY rowid_",
        "search_docs": "SELECT tenant_id, item_id, scope, body FROM search_docs"
        " WHERE tenant_id = ? AND kind = 'fact' ORDER BY doc",
        "entities": "SELECT * FROM entities WHERE tenant_id = ?",
        "episode_mentions": "SELECT * FROM episode_mentions WHERE tenant_id = ?",
    }
    rows = {t: src.execute(q, (tenant,)).fetchall() for t, q in tables.items()}
    src.close()
    width = {t: len(r[0]) if r else 0 for t, r in rows.items()}
    sql = {
        "facts": f"INSERT INTO facts VALUES ({','.join('?' * width['facts'])})",
        "assertions": "INSERT INTO assertions (tenant_id, timeline_key, seq, kind, fact_id,"
        " recorded_at, valid_from, valid_to, source_episode_id, payload)"
        " VALUES (?,?,?,?,?,?,?,?,?,?)",
        "search_docs": "INSERT OR IGNORE INTO search_docs (tenant_id, kind, item_id, scope,"
        " body) VALUES (?, 'fact', ?, ?, ?)",
        "entities": f"INSERT INTO entities VALUES ({','.join('?' * width['entities'])})",
        "episode_mentions": "INSERT INTO episode_mentions VALUES (?,?,?)",
    }
    target = open_store(f"sqlite:///{path}")
    target.close()  # created with sgam's layout, then written with plain sqlite3
    db = sqlite3.connect(path, isolation_level=None)
    register_terms(db)  # the search index's triggers compute its terms with these
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    parts = max(1, n // batch)
    work = [
        [(sql[t], r[len(r) * i // parts : len(r) * (i + 1) // parts]) for t, r in rows.items()]
        for i in range(parts)
    ]
    clock = Stopwatch()
    for step in work:
        db.execute("BEGIN IMMEDIATE")
        for statement, chunk in step:
            db.executemany(statement, chunk)
        db.execute("COMMIT")
    took = clock.stop()
    db.close()
    return took


# -- driver ----------------------------------------------------------------------------------
def chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def one_run(
    run: int, args: argparse.Namespace, raw_deltas: Sequence[Delta], deltas: Sequence[MemoryDelta]
) -> dict[str, Took]:
    took: dict[str, Took] = {}
    with tempfile.TemporaryDirectory(prefix="sgam-ingest-") as tmp:
        d = Path(tmp)

        def seed() -> None:
            took["seed"] = run_seed(
                raw_deltas, d / "seed.db", lookup_index=not args.seed_as_published
            )

        def raw() -> None:
            took["raw"] = run_raw(raw_deltas, d / "raw.db", batch=args.batch)

        def sgam_sqlite() -> None:
            store = open_store(f"sqlite:///{d / 'sgam.db'}")
            try:
                store_episodes(MemoryService(store), TENANT, raw_deltas)
                took["sgam"] = run_sgam(store, deltas, TENANT, batch=args.batch)
                if args.floor:
                    took["floor"] = run_floor(
                        store, d / "floor.db", TENANT, len(deltas), batch=args.batch
                    )
                if run == 0:
                    ok = sgam_intervals(store, TENANT) == seed_intervals(d / "seed.db")
                    print(f"  check: sgam and the seed reference hold the same intervals: {ok}")
                    if not ok:
                        raise SystemExit("sgam and the seed reference disagree")
            finally:
                store.close()

        def sgam_neo4j() -> None:
            store = open_store(args.store)
            tenant = "bench-" + uuid.uuid4().hex[:8]
            try:
                store_episodes(MemoryService(store), tenant, raw_deltas)
                took["sgam_neo4j"] = run_sgam(store, deltas, tenant, batch=args.batch)
            finally:
                store.purge_tenant(tenant_id=tenant)
                store.close()

        steps: list[Callable[[], None]] = [seed, raw, sgam_sqlite]
        if args.store:
            steps.append(sgam_neo4j)
        k = run % len(steps)
        # sgam's check reads the seed's database, so the seed runs before sgam in each run.
        order = steps[k:] + steps[:k]
        if order.index(seed) > order.index(sgam_sqlite):
            order.remove(seed)
            order.insert(order.index(sgam_sqlite), seed)
        for step in order:
            step()
    n = len(raw_deltas)
    print(
        f"run {run + 1}: "
        + ", ".join(
            f"{name} {n / t.wall:,.0f}/s (CPU {n / t.cpu:,.0f}/s)"
            for name, t in sorted(took.items())
        )
    )
    return took


def profile(args: argparse.Namespace) -> None:
    raw_deltas = workload(args.profile)
    deltas = sgam_deltas(raw_deltas)
    with tempfile.TemporaryDirectory(prefix="sgam-ingest-") as tmp:
        store = open_store(f"sqlite:///{Path(tmp) / 'sgam.db'}")
        store_episodes(MemoryService(store), TENANT, raw_deltas)
        # CPU time, not wall time: on a shared machine waiting for a core is not our cost.
        prof = cProfile.Profile(time.process_time)
        prof.enable()
        took = run_sgam(store, deltas, TENANT, batch=args.batch)
        prof.disable()
        store.close()
    print(f"{args.profile:,} facts: {took.wall:.2f} s wall, {took.cpu:.2f} s CPU, under cProfile")
    stats = pstats.Stats(prof).strip_dirs()
    stats.sort_stats("cumulative").print_stats(30)
    stats.sort_stats("tottime").print_stats(25)


def write_jsonl(deltas: Sequence[Delta], path: Path) -> None:
    """The workload as ``sgam import`` input: each episode's line (a POST /episodes body),
    then its deltas as one POST /facts body."""
    with path.open("w") as out:
        for start in range(0, len(deltas), FACTS_PER_EPISODE):
            part = deltas[start : start + FACTS_PER_EPISODE]
            eid = part[0].episode_id
            at = T0 + timedelta(seconds=start)
            episode = {
                "episode_id": eid,
                "kind": "event",
                "content": f"sync {eid}",
                "occurred_at": at.isoformat(),
            }
            facts = [
                {
                    "subject": d.subject,
                    "predicate": d.attribute,
                    "value": d.value,
                    "valid_from": d.valid_from.isoformat(),
                    "source_episode_id": d.episode_id,
                }
                for d in part
            ]
            out.write(json.dumps(episode) + "\n" + json.dumps({"facts": facts}) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--facts", type=int, default=100_000, help="fact deltas (default 100,000)")
    p.add_argument("--runs", type=int, default=3, help="runs; rates are medians (default 3)")
    p.add_argument("--batch", type=int, default=1000, help="batch size of raw and sgam")
    p.add_argument(
        "--seed-as-published",
        action="store_true",
        help="the seed without its lookup index (quadratic: keep --facts small)",
    )
    p.add_argument(
        "--floor",
        action="store_true",
        help="also replay the rows sgam wrote with plain executemany (SQLite's own cost)",
    )
    p.add_argument("--store", default=None, help="also run sgam on this Neo4j (bolt://…)")
    p.add_argument("--profile", type=int, default=0, help="profile N facts through sgam only")
    p.add_argument(
        "--jsonl", type=Path, default=None, help="write the workload as sgam import input"
    )
    args = p.parse_args(argv)
    if args.jsonl:
        write_jsonl(workload(args.facts), args.jsonl)
        print(f"wrote {args.facts:,} deltas to {args.jsonl}")
        return 0
    if args.profile:
        profile(args)
        return 0
    raw_deltas = workload(args.facts)
    deltas = sgam_deltas(raw_deltas)
    late, latest = 0, T0
    for d in raw_deltas:
        late += d.valid_from < latest
        latest = max(latest, d.valid_from)
    print(
        f"workload: {len(raw_deltas):,} deltas, {len(raw_deltas) // len(ATTRIBUTES):,} subjects"
        f" x {len(ATTRIBUTES)} attributes, {late:,} late; batch {args.batch}; runs {args.runs}"
        + ("; seed as published (no lookup index)" if args.seed_as_published else "")
    )
    results = [one_run(r, args, raw_deltas, deltas) for r in range(args.runs)]
    n = len(raw_deltas)
    wall = {k: statistics.median(n / r[k].wall for r in results) for k in results[0]}
    cpu = {k: statistics.median(n / r[k].cpu for r in results) for k in results[0]}
    print(f"\nmedian of {args.runs} run(s), facts per second of wall time (of CPU time):")
    for name in ("seed", "raw", "sgam", "floor", "sgam_neo4j"):
        if name in wall:
            # Neo4j works in its own process: the client's CPU time says nothing there.
            per_cpu = f"({cpu[name]:,.0f})" if name != "sgam_neo4j" else ""
            print(f"  {name:<11} {wall[name]:>10,.0f} {per_cpu:>12}")
    for a, b in (("sgam", "seed"), ("sgam", "raw")):
        print(f"  {a}/{b:<7} {wall[a] / wall[b]:>10.4f} {f'({cpu[a] / cpu[b]:.4f})':>12}")
    if "floor" in wall:
        a, b = "floor", "seed"
        print(f"  {a}/{b:<6} {wall[a] / wall[b]:>10.4f} {f'({cpu[a] / cpu[b]:.4f})':>12}")
    if "sgam_neo4j" in wall:
        print(f"  neo4j/seed  {wall['sgam_neo4j'] / wall['seed']:>10.4f}")
    print(f"peak RSS: {peak_rss_mib():,.0f} MiB (the whole process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
