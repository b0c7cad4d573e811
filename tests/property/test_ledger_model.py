"""Random histories against a brute-force reference model written independently of the core.

The model keeps a timeline as an array of time *cells*, each holding the label of the
interval that covers it (or nothing), and applies the rules of ARCHITECTURE.md cell by
cell. The real ledger (temporal core + SQLite store, through MemoryService) must agree
with it after every step — current history, every as_of, and every earlier known_at.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from graph.errors import FactConflictError, ValidationError
from graph.model import ConflictPolicy, EpisodeCreate, MemoryDelta, WriteStatus
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore
from graph.timeutil import utcnow

H = 32  # cells; generated instants stay below 26, so a run reaching the last cell is open
T0 = datetime(2026, 1, 1, tzinfo=UTC)
EPISODES = ("e1", "e2", "e3", "e4")


def at(tick: int) -> datetime:
    return T0 + timedelta(hours=tick)


Label = tuple[object, ...]


@dataclass
class Info:
    value: str
    sources: tuple[str, ...]
    confidence: float


@dataclass
class Model:
    cells: list[Label | None] = field(default_factory=lambda: [None] * H)
    info: dict[Label, Info] = field(default_factory=dict)

    def copy(self) -> Model:
        return Model(
            list(self.cells),
            {k: Info(v.value, v.sources, v.confidence) for k, v in self.info.items()},
        )

    def run_of(self, label: Label) -> tuple[int, int]:
        idx = [i for i, c in enumerate(self.cells) if c == label]
        return idx[0], idx[-1] + 1

    def intervals(self) -> list[tuple[str, int, int | None, tuple[str, ...]]]:
        out = []
        for label in dict.fromkeys(c for c in self.cells if c is not None):
            start, end = self.run_of(label)
            i = self.info[label]
            out.append((i.value, start, None if end == H else end, i.sources))
        return sorted(out, key=lambda x: x[1])

    def apply_assert(self, op: Op, strict: bool) -> str:
        s, label = op.start, op.label
        x = self.cells[s]
        if x is not None and (s == 0 or self.cells[s - 1] != x):  # x starts exactly at s
            ix = self.info[x]
            if ix.value == op.value:
                if op.src in ix.sources:
                    return "unchanged"
                ix.sources = (*ix.sources, op.src)
                return "corroborated"
            policy = op.policy
            if not strict and policy == ConflictPolicy.REJECT:
                policy = ConflictPolicy.LATEST_RECORDED_WINS
            if policy == ConflictPolicy.REJECT:
                return "conflict"
            if policy == ConflictPolicy.HIGHEST_CONFIDENCE_WINS and op.confidence <= ix.confidence:
                return "kept"
        if op.end is None:
            c = s
            while c < H and self.cells[c] == x:  # x may be None: fill the gap up to the next
                self.cells[c] = label
                c += 1
        else:
            e = op.end
            y = self.cells[e - 1]
            if y is not None and self.cells[e] == y and s > 0 and self.cells[s - 1] == y:
                # y covers the whole portion: what resumes after it is a new piece
                piece: Label = ("piece", y, label)
                self.info[piece] = Info(
                    self.info[y].value, self.info[y].sources, self.info[y].confidence
                )
                c = e
                while c < H and self.cells[c] == y:
                    self.cells[c] = piece
                    c += 1
            for c in range(s, e):
                self.cells[c] = label
        self.info[label] = Info(op.value, (op.src,), op.confidence)
        return "created"

    def retract(self, label: Label, tick: int) -> bool:
        if label not in self.cells or self.cells[tick] != label:
            return False
        start, _ = self.run_of(label)
        if start >= tick:
            return False
        c = tick
        while c < H and self.cells[c] == label:
            self.cells[c] = None
            c += 1
        return True


@dataclass
class Op:
    kind: str
    label: Label = ()
    value: str = ""
    src: str = ""
    start: int = 0
    end: int | None = None
    policy: ConflictPolicy = ConflictPolicy.REJECT
    confidence: float = 1.0
    tick: int = 0


def refold(log: list[Op]) -> Model:
    m = Model()
    for op in log:
        if op.kind == "assert":
            m.apply_assert(op, strict=False)
        else:
            m.retract(op.label, op.tick)
    return m


@st.composite
def histories(draw: st.DrawFn) -> list[Op]:
    ops = []
    for n in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["assert"] * 6 + ["retract", "delete"]))
        if kind == "assert":
            start = draw(st.integers(0, 24))
            bounded = draw(st.booleans())
            ops.append(
                Op(
                    kind="assert",
                    label=("a", n),
                    value=draw(st.sampled_from("ABC")),
                    src=draw(st.sampled_from(EPISODES)),
                    start=start,
                    end=draw(st.integers(start + 1, min(25, start + 6))) if bounded else None,
                    policy=draw(st.sampled_from(list(ConflictPolicy))),
                    confidence=draw(st.sampled_from([0.3, 0.6, 0.9])),
                )
            )
        elif kind == "retract":
            ops.append(Op(kind="retract", tick=draw(st.integers(1, 25))))
        else:
            ops.append(Op(kind="delete", src=draw(st.sampled_from(EPISODES))))
    return ops


@pytest.fixture(scope="module")
def ledger() -> Iterator[MemoryService]:
    with tempfile.TemporaryDirectory() as d:
        store = SqliteStore(f"{d}/p.db")
        store.init()
        yield MemoryService(store)
        store.close()


def real_history(
    svc: MemoryService, tenant: str, known_at: datetime | None = None
) -> list[tuple[object, int, int | None, tuple[str, ...]]]:
    def tick(d: datetime | None) -> int | None:
        return None if d is None else int((d - T0) / timedelta(hours=1))

    return [
        (f.value, tick(f.valid_from), tick(f.valid_to), tuple(f.sources))
        for f in svc.history(tenant_id=tenant, subject="s", predicate="p", known_at=known_at)
    ]


@settings(
    max_examples=int(os.environ.get("SGAM_PROPERTY_EXAMPLES", "400")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ops=histories())
def test_ledger_agrees_with_the_cell_model(ledger: MemoryService, ops: list[Op]) -> None:
    tenant = "p-" + uuid.uuid4().hex[:12]
    note("\n".join(repr(o) for o in ops))
    for e in EPISODES:
        ledger.add_episode(
            tenant_id=tenant, body=EpisodeCreate(episode_id=e, content=e, occurred_at=T0)
        )
    model = Model()
    log: list[Op] = []
    deleted: set[str] = set()
    snapshots: list[tuple[datetime, Model]] = []
    purged_after: list[set[str]] = []  # for snapshot k: episodes deleted after it
    for op in ops:
        if op.kind == "assert":
            delta = MemoryDelta(
                subject="s",
                predicate="p",
                value=op.value,
                valid_from=at(op.start),
                valid_to=at(op.end) if op.end is not None else None,
                source_episode_id=op.src,
                confidence=op.confidence,
            )
            if op.src in deleted:
                with pytest.raises(ValidationError):
                    ledger.write_facts(tenant_id=tenant, deltas=[delta], policy=op.policy)
                continue
            trial = model.copy()
            expected = trial.apply_assert(op, strict=True)
            if expected == "conflict":
                with pytest.raises(FactConflictError):
                    ledger.write_facts(tenant_id=tenant, deltas=[delta], policy=op.policy)
                continue
            result = ledger.write_facts(tenant_id=tenant, deltas=[delta], policy=op.policy)
            status = {
                "created": WriteStatus.CREATED,
                "unchanged": WriteStatus.UNCHANGED,
                "corroborated": WriteStatus.CORROBORATED,
                "kept": WriteStatus.KEPT_EXISTING,
            }
            assert result.outcomes == [status[expected]]
            model = trial
            if expected != "unchanged":
                log.append(op)
        elif op.kind == "retract":
            label = model.cells[op.tick - 1]
            current = ledger.facts(
                tenant_id=tenant,
                subject="s",
                predicate="p",
                as_of=at(op.tick) - timedelta(microseconds=1),
            )
            assert (label is None) == (not current)
            if label is None:
                continue
            trial = model.copy()
            if trial.retract(label, op.tick):
                ledger.retract(tenant_id=tenant, fact_id=current[0].fact_id, valid_to=at(op.tick))
                model = trial
                log.append(Op(kind="retract", label=label, tick=op.tick))
            else:
                with pytest.raises(ValidationError):
                    ledger.retract(
                        tenant_id=tenant, fact_id=current[0].fact_id, valid_to=at(op.tick)
                    )
        else:
            if op.src in deleted:
                continue
            ledger.delete_episode(tenant_id=tenant, episode_id=op.src)
            deleted.add(op.src)
            for s in purged_after:
                s.add(op.src)
            log = [o for o in log if not (o.kind == "assert" and o.src == op.src)]
            model = refold(log)
        assert real_history(ledger, tenant) == model.intervals()
        snapshots.append((utcnow(), model.copy()))
        purged_after.append(set())

    # Every as_of answer now equals the model's cell at that instant.
    for tick in range(0, 27):
        facts = ledger.facts(tenant_id=tenant, subject="s", predicate="p", as_of=at(tick))
        label = model.cells[tick]
        assert [f.value for f in facts] == ([] if label is None else [model.info[label].value])
    # Every earlier known_at reproduces what was believed then, less what was really deleted.
    for (when, snap), gone in zip(snapshots, purged_after, strict=True):
        expected = [i for i in snap.intervals() if not (len(i[3]) == 1 and i[3][0] in gone)]
        assert real_history(ledger, tenant, known_at=when) == expected
    # The database never holds two open or overlapping current rows.
    ends = [
        (f.valid_from, f.valid_to)
        for f in ledger.history(tenant_id=tenant, subject="s", predicate="p")
    ]
    assert sum(1 for _, e in ends if e is None) <= 1
    assert all(a[1] is not None and a[1] <= b[0] for a, b in itertools.pairwise(ends))
    ledger.store.purge_tenant(tenant_id=tenant)
