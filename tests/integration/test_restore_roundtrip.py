"""Ledger export → restore reproduces a tenant exactly: SQLite → Neo4j → SQLite.

A seeded generator writes a random history (writes, late facts, conflicts under each
policy, corroboration, retractions, episode deletions); after each leg the facts at many
(as_of, known_at) points, every timeline's history and every fact id must be the same.
"""

from __future__ import annotations

import io
import json
import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from api.transfer.exporter import ExportKind, export, restore
from graph.errors import SgamError
from graph.model import ConflictPolicy, EpisodeCreate, Fact, FactQuery, MemoryDelta
from graph.port import Store
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore
from graph.timeutil import format_instant, from_db, utcnow

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SUBJECTS = ("ann", "bob", "cyd")
PREDICATES = ("city", "tier")


def random_history(
    svc: MemoryService, tenant: str, *, seed: int, steps: int = 60
) -> list[datetime]:
    """Write a random history; return instants between writes (known_at probes)."""
    rng = random.Random(seed)
    marks: list[datetime] = []
    episodes: list[str] = []
    for step in range(steps):
        roll = rng.random()
        if roll < 0.15 or not episodes:
            eid = f"ep{step}"
            svc.add_episode(
                tenant_id=tenant,
                body=EpisodeCreate(episode_id=eid, content=f"note {step}", occurred_at=T0),
            )
            episodes.append(eid)
        day = rng.randrange(0, 40)  # late facts land before earlier-written ones
        delta = MemoryDelta(
            subject=rng.choice(SUBJECTS),
            predicate=rng.choice(PREDICATES),
            value=rng.choice(("a", "b", "c")),
            valid_from=T0 + timedelta(days=day),
            valid_to=T0 + timedelta(days=day + rng.randrange(1, 9)) if rng.random() < 0.2 else None,
            source_episode_id=rng.choice(episodes),
        )
        policy = rng.choice(list(ConflictPolicy))
        try:
            if roll < 0.85:
                svc.write_facts(tenant_id=tenant, deltas=[delta], policy=policy)
            elif roll < 0.93:
                current = svc.facts(tenant_id=tenant, limit=50)
                if current:
                    svc.retract(tenant_id=tenant, fact_id=rng.choice(current).fact_id)
            elif len(episodes) > 1:
                svc.delete_episode(
                    tenant_id=tenant, episode_id=episodes.pop(rng.randrange(len(episodes)))
                )
        except SgamError:
            pass  # a refused conflict is part of the history too: it wrote nothing
        marks.append(utcnow())
    _extracted(svc, tenant, episodes[0])
    return marks


def _extracted(svc: MemoryService, tenant: str, episode_id: str) -> None:
    """Take one episode through the queue to extracted, with model usage: its status,
    attempts and usage are part of the ledger an export carries."""
    q, now = svc.store.queue, utcnow()
    assert (
        q.enqueue(
            tenant_id=tenant,
            episode_id=episode_id,
            at=now,
            from_statuses=["stored"],
            reset_attempts=True,
        )
        is not None
    )
    assert (
        q.claim_episode(
            tenant_id=tenant,
            episode_id=episode_id,
            owner="w",
            now=now,
            lease_until=now + timedelta(minutes=5),
            from_statuses=["pending"],
        )
        is not None
    )
    usage = {
        "model": "m",
        "prompt_tokens": 120,
        "completion_tokens": 30,
        "calls": 2,
        "latency_seconds": 1.5,
    }
    assert q.complete(tenant_id=tenant, episode_id=episode_id, owner="w", rejected=[], usage=usage)
    stored = svc.get_episode(tenant_id=tenant, episode_id=episode_id)
    assert stored.usage is not None
    assert stored.usage.prompt_tokens == 120


def _all(
    store: Store, tenant: str, *, as_of: datetime | None, known_at: datetime
) -> Iterator[Fact]:
    after = None
    while True:
        page = store.facts(
            tenant_id=tenant,
            query=FactQuery(as_of=as_of, known_at=known_at, limit=200, after=after),
        )
        yield from page
        if len(page) < 200:
            return
        after = (page[-1].subject, page[-1].predicate, page[-1].fact_id)


def probes(marks: list[datetime]) -> list[datetime]:
    """System times to ask at: every fifth write, the last one and now (taken once)."""
    return [*marks[::5], marks[-1], utcnow()]


def answers(store: Store, tenant: str, marks: list[datetime]) -> dict[str, object]:
    """Every answer the probes can see, as plain comparable data (version ids aside:
    they name rows, and the rows are the same)."""
    out: dict[str, object] = {}
    days = [None, *(T0 + timedelta(days=d, hours=12) for d in range(0, 50, 3))]
    for k in marks:
        for a in days:
            out[f"{a}|{k}"] = sorted(
                f.model_dump_json(exclude={"tenant_id"})
                for f in _all(store, tenant, as_of=a, known_at=k)
            )
        for s in SUBJECTS:
            for p in PREDICATES:
                hist = store.history(
                    tenant_id=tenant, subject=s, predicate=p, object=None, known_at=k
                )
                out[f"h|{s}|{p}|{k}"] = [f.model_dump_json(exclude={"tenant_id"}) for f in hist]
    return out


def ledger(store: Store, tenant: str) -> str:
    buf = io.StringIO()
    export(store, buf, tenant_id=tenant, kind=ExportKind.LEDGER)
    return buf.getvalue()


def copy(src: Store, src_tenant: str, dst: Store, dst_tenant: str) -> str:
    text = ledger(src, src_tenant)
    restore(dst, io.BytesIO(text.encode()), tenant_id=dst_tenant)
    return text


@pytest.mark.parametrize("seed", [1, 2])
def test_sqlite_to_sqlite_restores_every_answer(tmp_path: Path, seed: int) -> None:
    a = SqliteStore(tmp_path / "a.db")
    b = SqliteStore(tmp_path / "b.db")
    for s in (a, b):
        s.init()
    try:
        marks = probes(random_history(MemoryService(a), "t1", seed=seed))
        text = copy(a, "t1", b, "t2")
        assert answers(b, "t2", marks) == answers(a, "t1", marks)
        assert ledger(b, "t2") == text  # the same rows, ids and times, record for record
        assert '"type":"assertion"' in text
        assert '"type":"version"' in text
    finally:
        a.close()
        b.close()


def test_restore_refuses_a_tenant_with_data(tmp_path: Path) -> None:
    a = SqliteStore(tmp_path / "a.db")
    a.init()
    try:
        random_history(MemoryService(a), "t1", seed=3, steps=10)
        with pytest.raises(SgamError, match="already holds data"):
            copy(a, "t1", a, "t1")
    finally:
        a.close()


@pytest.mark.neo4j
def test_sqlite_to_neo4j_to_sqlite(tmp_path: Path, neo4j_store: Store) -> None:
    a = SqliteStore(tmp_path / "a.db")
    c = SqliteStore(tmp_path / "c.db")
    for s in (a, c):
        s.init()
    mid = "rt-" + uuid.uuid4().hex[:8]
    try:
        marks = probes(random_history(MemoryService(a), "t1", seed=7))
        text = copy(a, "t1", neo4j_store, mid)
        assert answers(neo4j_store, mid, marks) == answers(a, "t1", marks)
        back = copy(neo4j_store, mid, c, "t1")
        assert answers(c, "t1", marks) == answers(a, "t1", marks)
        assert sorted(back.splitlines()) == sorted(text.splitlines())
    finally:
        neo4j_store.purge_tenant(tenant_id=mid)
        a.close()
        c.close()


def test_writes_after_a_restore_record_after_every_restored_instant(tmp_path: Path) -> None:
    """A ledger recorded on a machine whose clock ran ahead: the first write after the
    restore still records after every restored instant (the tenant's system clock moves
    past them), so no answer at a restored known_at changes later."""
    a = SqliteStore(tmp_path / "a.db")
    b = SqliteStore(tmp_path / "b.db")
    for s in (a, b):
        s.init()
    try:
        random_history(MemoryService(a), "t1", seed=5, steps=12)
        ahead = timedelta(days=1)
        lines = []
        for line in ledger(a, "t1").splitlines():
            r = json.loads(line)
            for k in ("recorded_at", "retired_at"):
                if r["type"] in ("version", "assertion") and r.get(k):
                    r[k] = format_instant(from_db(r[k]) + ahead)
            lines.append(json.dumps(r))
        restore(b, io.BytesIO("\n".join(lines).encode()), tenant_id="t2")
        latest = max(
            from_db(json.loads(x)[k])
            for x in lines
            for k in ("recorded_at", "retired_at")
            if json.loads(x)["type"] in ("version", "assertion") and json.loads(x).get(k)
        )
        assert latest > utcnow()
        svc = MemoryService(b)
        svc.add_episode(
            tenant_id="t2", body=EpisodeCreate(episode_id="late", content="x", occurred_at=T0)
        )
        written = svc.write_facts(
            tenant_id="t2",
            deltas=[
                MemoryDelta(
                    subject="zoe",
                    predicate="city",
                    value="a",
                    valid_from=T0,
                    source_episode_id="late",
                )
            ],
        ).facts
        assert [f.recorded_at > latest for f in written] == [True]
    finally:
        a.close()
        b.close()


def _clone_in_place(store: Store, src: str, dst: str) -> None:
    """Restore a tenant's ledger into another tenant of the same store: every answer the
    same, every record the same but the version ids (unique in a store), renamed."""
    marks = probes(random_history(MemoryService(store), src, seed=11, steps=30))
    text = copy(store, src, store, dst)

    def renamed(x: object) -> object:  # the answers with version ids left out
        if isinstance(x, dict):
            return {k: renamed(v) for k, v in x.items()}
        if isinstance(x, list):
            return [renamed(v) for v in x]
        return {**json.loads(x), "version_id": None} if isinstance(x, str) else x

    assert renamed(answers(store, dst, marks)) == renamed(answers(store, src, marks))

    def without_version_ids(t: str) -> list[str]:
        rows = map(json.loads, t.splitlines())
        return sorted(json.dumps({**r, "version_id": None}) for r in rows)

    again = ledger(store, dst)
    assert without_version_ids(again) == without_version_ids(text)
    ids = {json.loads(x).get("version_id") for x in text.splitlines()} - {None}
    assert ids
    assert ids.isdisjoint({json.loads(x).get("version_id") for x in again.splitlines()})


def test_a_tenant_clones_into_the_same_sqlite_store(tmp_path: Path) -> None:
    a = SqliteStore(tmp_path / "a.db")
    a.init()
    try:
        _clone_in_place(a, "t1", "t2")
    finally:
        a.close()


@pytest.mark.neo4j
def test_a_tenant_clones_into_the_same_neo4j_store(neo4j_store: Store) -> None:
    src, dst = ("cl-" + uuid.uuid4().hex[:8] for _ in range(2))
    try:
        _clone_in_place(neo4j_store, src, dst)
    finally:
        for t in (src, dst):
            neo4j_store.purge_tenant(tenant_id=t)
