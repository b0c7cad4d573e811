"""Differential test: SQLite and Neo4j, fed the same random history, give the same answers.

Both stores get the same operations through MemoryService — episodes, batches of writes
under all three conflict policies, bounded facts, equal and microsecond-apart
timestamps, redeliveries, corroborations, retractions, episode deletions — and every
answer is compared field by field: write outcomes and errors after each step; then
facts at every instant as known at every step, for each query shape the Neo4j store
has a template for, histories, traversals and the facts each episode sourced.

Generated ids differ between the stores, so fact ids are compared structurally: a
bijection between the two stores' ids is built as answers are compared, and a pair
that contradicts it fails. System times differ too: each one is compared as the step
of the history that recorded it (the instants between steps are shared by both).
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from graph import erasure
from graph.erasure import erasable, forget
from graph.errors import FactConflictError, NotFoundError, SgamError, ValidationError
from graph.model import (
    ConflictPolicy,
    Direction,
    EpisodeCreate,
    Fact,
    FactQuery,
    MemoryDelta,
    WriteResult,
)
from graph.port import Store
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore
from graph.timeutil import utcnow

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

T0 = datetime(2026, 1, 1, tzinfo=UTC)
# 12 hours, each also one microsecond later: equal and adjacent timestamps are common.
INSTANTS = [T0 + timedelta(hours=h, microseconds=u) for h in range(12) for u in (0, 1)]
EPISODES = ("e1", "e2", "e3", "e4")
SUBJECTS = ("s1", "s2")
LITERAL = "status"  # single-valued literal timelines
RELATION = "holds"  # many-valued relations: one timeline per object
OBJECTS = ("o1", "o2")


# -- the history ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Write:
    deltas: tuple[MemoryDelta, ...]
    policy: ConflictPolicy


@dataclass(frozen=True)
class Retract:
    subject: str
    predicate: str
    obj: str | None
    at: int  # index into INSTANTS


@dataclass(frozen=True)
class Delete:
    episode: str


@dataclass(frozen=True)
class Redeliver:
    """Send the previous write batch again, unchanged."""


Op = Write | Retract | Delete | Redeliver


@st.composite
def deltas(draw: st.DrawFn) -> MemoryDelta:
    # Few starts, two of them a microsecond apart: equal starts (conflicts, redeliveries,
    # corroborations) are frequent.
    start = draw(st.sampled_from([0, 2, 3, 6, 8]))
    end = (
        draw(st.integers(start + 1, min(len(INSTANTS) - 1, start + 6)))
        if draw(st.booleans())
        else None
    )
    common: dict[str, Any] = {
        "subject": draw(st.sampled_from(["s1", "s1", "s1", "s2"])),
        "valid_from": INSTANTS[start],
        "valid_to": INSTANTS[end] if end is not None else None,
        "source_episode_id": draw(st.sampled_from(EPISODES)),
        "confidence": draw(st.sampled_from([0.3, 0.6, 0.9])),
    }
    if draw(st.integers(0, 3)) == 0:
        return MemoryDelta(
            predicate=RELATION,  # the value has no say here: same object, same statement
            object=draw(st.sampled_from(OBJECTS)),
            object_type="Account",
            **common,
        )
    value = draw(st.sampled_from(["A", "B", 7, 7.0, 7.5]))  # 7 and 7.0 are one value
    return MemoryDelta(predicate=LITERAL, value=value, **common)


@st.composite
def histories(draw: st.DrawFn) -> list[Op]:
    ops: list[Op] = []
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["write"] * 6 + ["retract", "delete", "redeliver"]))
        if kind == "write":
            batch = tuple(draw(st.lists(deltas(), min_size=1, max_size=3)))
            ops.append(Write(batch, draw(st.sampled_from(list(ConflictPolicy)))))
        elif kind == "retract":
            rel = draw(st.booleans())
            ops.append(
                Retract(
                    subject=draw(st.sampled_from(SUBJECTS)),
                    predicate=RELATION if rel else LITERAL,
                    obj=draw(st.sampled_from(OBJECTS)) if rel else None,
                    at=draw(st.integers(1, len(INSTANTS) - 1)),
                )
            )
        elif kind == "delete":
            ops.append(Delete(draw(st.sampled_from(EPISODES))))
        else:
            ops.append(Redeliver())
    return ops


# -- structural comparison -----------------------------------------------------------------
@dataclass
class Ids:
    """The bijection between SQLite's and Neo4j's generated fact ids."""

    to_neo: dict[str, str] = field(default_factory=dict)
    to_sql: dict[str, str] = field(default_factory=dict)

    def pair(self, sql: str, neo: str) -> None:
        assert self.to_neo.setdefault(sql, neo) == neo, f"{sql} is {self.to_neo[sql]}, not {neo}"
        assert self.to_sql.setdefault(neo, sql) == sql, f"{neo} is {self.to_sql[neo]}, not {sql}"


@dataclass
class Steps:
    """Shared instants taken between steps; a system time is compared as its step."""

    marks: list[datetime] = field(default_factory=list)

    def of(self, t: datetime | None) -> int | None:
        if t is None:
            return None
        return sum(1 for m in self.marks if m < t)


def shape(f: Fact, steps: Steps) -> tuple[Any, ...]:
    """Everything but the generated ids, system times as steps."""
    return (
        f.subject,
        f.subject_type,
        f.predicate,
        f.value,
        f.value_type,
        f.object,
        f.object_type,
        f.valid_from,
        f.valid_to,
        steps.of(f.recorded_at),
        steps.of(f.retired_at),
        f.source_episode_id,
        tuple(f.sources),
        f.confidence,
        f.memory_type,
        f.schema_version,
        f.retention_policy,
        f.cardinality,
        len(f.supersedes),
    )


def sort_key(f: Fact) -> tuple[Any, ...]:
    # Unique within one answer: one timeline's intervals at one system time never overlap.
    return (f.subject, f.predicate, f.object or "", repr(f.value), f.valid_from)


def same_facts(sql: list[Fact], neo: list[Fact], ids: Ids, steps: Steps, what: str) -> None:
    a, b = sorted(sql, key=sort_key), sorted(neo, key=sort_key)
    assert [shape(f, steps) for f in a] == [shape(f, steps) for f in b], what
    for x, y in zip(a, b, strict=True):
        ids.pair(x.fact_id, y.fact_id)
    for x, y in zip(a, b, strict=True):
        for s, n in zip(x.supersedes, y.supersedes, strict=True):
            ids.pair(s, n)


def same_error(e_sql: Exception, e_neo: Exception, ids: Ids) -> None:
    assert type(e_sql) is type(e_neo), (e_sql, e_neo)
    if isinstance(e_sql, FactConflictError):
        assert isinstance(e_neo, FactConflictError)
        assert (e_sql.index, e_sql.source_episode_id, e_sql.conflicting_source_episode_id) == (
            e_neo.index,
            e_neo.source_episode_id,
            e_neo.conflicting_source_episode_id,
        )
        ids.pair(e_sql.conflicting_fact_id, e_neo.conflicting_fact_id)
    elif isinstance(e_sql, ValidationError):
        assert isinstance(e_neo, ValidationError)
        assert [x.as_dict() for x in e_sql.errors] == [x.as_dict() for x in e_neo.errors]
    elif isinstance(e_sql, SgamError):
        assert str(e_sql) == str(e_neo)
    # Anything else is a bug of the shared ledger (see the report of issue 3): it must at
    # least fail the same way on both stores and, like any failure, write nothing.


def both(sql: Callable[[], Any], neo: Callable[[], Any], ids: Ids) -> tuple[Any, Any] | None:
    """Run one step on both stores; the same failure on both ends it."""
    try:
        a = sql()
    except Exception as e_sql:  # compared with the other store's failure
        event(f"refused: {type(e_sql).__name__}")
        with pytest.raises(Exception) as e_neo:  # noqa: PT011 - the type is compared below
            neo()
        same_error(e_sql, e_neo.value, ids)
        return None
    return a, neo()


# -- the run -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sqlite_module_store() -> Iterator[SqliteStore]:
    with tempfile.TemporaryDirectory() as d:
        s = SqliteStore(f"{d}/diff.db")
        s.init()
        yield s
        s.close()


@dataclass
class Pair:
    sql: MemoryService
    neo: MemoryService
    tenant: str
    ids: Ids = field(default_factory=Ids)
    steps: Steps = field(default_factory=Steps)

    def timelines(self) -> list[tuple[str, str, str | None]]:
        return [(s, LITERAL, None) for s in SUBJECTS] + [
            (s, RELATION, o) for s in SUBJECTS for o in OBJECTS
        ]

    def compare_histories(self, known_at: datetime | None = None) -> None:
        for s, p, o in self.timelines():
            kw: dict[str, Any] = {"tenant_id": self.tenant, "subject": s, "predicate": p}
            kw.update(object=o, known_at=known_at)
            same_facts(
                self.sql.history(**kw), self.neo.history(**kw), self.ids, self.steps, f"{kw}"
            )


def apply(pair: Pair, op: Op, last: Write | None) -> None:
    t = pair.tenant
    if isinstance(op, Redeliver):
        if last is None:
            return
        op = last
    if isinstance(op, Write):
        w = op
        got = both(
            lambda: pair.sql.write_facts(tenant_id=t, deltas=w.deltas, policy=w.policy),
            lambda: pair.neo.write_facts(tenant_id=t, deltas=w.deltas, policy=w.policy),
            pair.ids,
        )
        if got is not None:
            a: WriteResult = got[0]
            b: WriteResult = got[1]
            assert a.outcomes == b.outcomes
            for outcome in a.outcomes:
                event(f"write: {outcome.value}")
            for x, y in zip(a.facts, b.facts, strict=True):
                same_facts([x], [y], pair.ids, pair.steps, "write result")
    elif isinstance(op, Retract):
        r = op
        before = INSTANTS[r.at] - timedelta(microseconds=1)
        q: dict[str, Any] = {"tenant_id": t, "subject": r.subject, "predicate": r.predicate}
        q.update(object=r.obj, as_of=before)
        current = pair.sql.facts(**q)
        same_facts(current, pair.neo.facts(**q), pair.ids, pair.steps, "before retract")
        if not current:
            return
        sql_id = current[0].fact_id
        neo_id = pair.ids.to_neo[sql_id]
        got = both(
            lambda: pair.sql.retract(tenant_id=t, fact_id=sql_id, valid_to=INSTANTS[r.at]),
            lambda: pair.neo.retract(tenant_id=t, fact_id=neo_id, valid_to=INSTANTS[r.at]),
            pair.ids,
        )
        if got is not None:
            same_facts([got[0]], [got[1]], pair.ids, pair.steps, "retracted")
    else:
        ep = op.episode
        got = both(
            lambda: pair.sql.delete_episode(tenant_id=t, episode_id=ep),
            lambda: pair.neo.delete_episode(tenant_id=t, episode_id=ep),
            pair.ids,
        )
        if got is not None:
            assert got[0].model_dump() == got[1].model_dump()
            event("delete: restored some" if got[0].facts_restored else "delete: restored none")


def compare_everything(pair: Pair, sql_store: Store, neo_store: Store) -> None:
    t = pair.tenant
    known = [*pair.steps.marks, utcnow()]
    for k in known:
        pair.compare_histories(known_at=k)
        for i, as_of in enumerate([*INSTANTS, T0 - timedelta(hours=1)]):
            shapes: list[dict[str, Any]] = [{}]  # the whole tenant: facts.by_tenant
            if i % 3 == 0:  # the anchored shapes, at fewer instants
                shapes += [{"subject": "s1"}, {"predicate": LITERAL}, {"object": "o1"}]
            for filt in shapes:
                q = FactQuery(as_of=as_of, known_at=k, **filt)
                same_facts(
                    sql_store.facts(tenant_id=t, query=q),
                    neo_store.facts(tenant_id=t, query=q),
                    pair.ids,
                    pair.steps,
                    f"facts {filt} as_of={as_of} known_at={k}",
                )
        # What each episode sourced, at any valid time (deleted ones included).
        for ep in EPISODES:
            q = FactQuery(source_episode_id=ep, as_of=None, known_at=k)
            same_facts(
                sql_store.facts(tenant_id=t, query=q),
                neo_store.facts(tenant_id=t, query=q),
                pair.ids,
                pair.steps,
                f"episode {ep} known_at={k}",
            )
    for as_of in INSTANTS[::4]:
        for direction in Direction:
            kw: dict[str, Any] = {"tenant_id": t, "entity_id": "s1", "depth": 2}
            kw.update(direction=direction, as_of=as_of)
            got = both(
                partial(pair.sql.neighbors, **kw), partial(pair.neo.neighbors, **kw), pair.ids
            )
            if got is None:
                continue  # no such entity in either store
            a, b = got
            assert [(e.entity_id, e.entity_type) for e in a.entities] == [
                (e.entity_id, e.entity_type) for e in b.entities
            ]
            same_facts(a.facts, b.facts, pair.ids, pair.steps, f"neighbors {direction} {as_of}")


def forget_on_both(
    pair: Pair, sql_store: Store, neo_store: Store, entity_id: str, *, per_tx: int
) -> None:
    """Forgetting an entity: the dry run (graph.erasure.Preview, over a read snapshot, in
    one pass) answers exactly what the forget then does (in batches of ``per_tx``
    timelines' episodes, then the rest), on each store, and the stores agree on both and
    on every timeline afterwards."""
    results = []
    for store in (sql_store, neo_store):
        try:
            dry = forget(erasable(store), tenant_id=pair.tenant, entity_id=entity_id, dry_run=True)
        except NotFoundError:
            results.append(None)
            continue
        with patch.object(erasure, "TIMELINES_PER_TX", per_tx):
            real = forget(
                erasable(store), tenant_id=pair.tenant, entity_id=entity_id, dry_run=False
            )
        assert (dry.dry_run, real.dry_run) == (True, False)
        assert dry.model_dump(exclude={"dry_run"}) == real.model_dump(exclude={"dry_run"})
        results.append(real.model_dump())
    assert results[0] == results[1]
    if results[0] is not None:
        event(f"forget {entity_id}: {results[0]['versions']} versions")
    pair.steps.marks.append(utcnow())
    pair.compare_histories()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=histories())
def test_sqlite_and_neo4j_give_the_same_answers(
    sqlite_module_store: SqliteStore, neo4j_store: Store, ops: list[Op]
) -> None:
    note("\n".join(repr(o) for o in ops))
    pair = Pair(
        sql=MemoryService(sqlite_module_store),
        neo=MemoryService(neo4j_store),
        tenant="diff-" + uuid.uuid4().hex[:12],
    )
    try:
        for svc in (pair.sql, pair.neo):
            for e in EPISODES:
                svc.add_episode(
                    tenant_id=pair.tenant,
                    body=EpisodeCreate(episode_id=e, content=f"episode {e}", occurred_at=T0),
                )
        last: Write | None = None
        for op in ops:
            apply(pair, op, last)
            if isinstance(op, Write):
                last = op
            pair.steps.marks.append(utcnow())  # after this step on both stores
            pair.compare_histories()
        compare_everything(pair, sqlite_module_store, neo4j_store)
        # An object of relations (timelines shared with subjects), then a subject: its
        # episodes one batch each.
        for entity, per_tx in (("o1", erasure.TIMELINES_PER_TX), ("s1", 1)):
            forget_on_both(pair, sqlite_module_store, neo4j_store, entity, per_tx=per_tx)
    finally:
        sqlite_module_store.purge_tenant(tenant_id=pair.tenant)
        neo4j_store.purge_tenant(tenant_id=pair.tenant)
