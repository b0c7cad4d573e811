"""``sgam import`` on a real SQLite store: bad lines refused alone, the rest written,
re-running writes nothing new, exit codes 0/1/2."""

from __future__ import annotations

import io
import json
from pathlib import Path

from api.transfer.commands import run_export, run_import
from api.transfer.exporter import ExportKind
from api.transfer.importer import ServiceSink, Written, import_lines
from graph.model import ConflictPolicy, FactQuery, MemoryDelta
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore
from graph.timeutil import utcnow


def _line(body: object) -> str:
    return json.dumps(body) + "\n"


def _fact(subject: str, value: str, day: int, **kw: object) -> dict[str, object]:
    return {
        "subject": subject,
        "predicate": "city",
        "value": value,
        "valid_from": f"2026-01-{day:02d}T00:00:00Z",
        **kw,
    }


def _count(db: Path, tenant: str) -> int:
    s = SqliteStore(db)
    try:
        q = FactQuery(as_of=None, known_at=utcnow(), limit=1000)
        return len(s.facts(tenant_id=tenant, query=q))
    finally:
        s.close()


def test_bad_lines_are_refused_alone_and_a_rerun_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    src = tmp_path / "in.jsonl"
    rejects = tmp_path / "rejects.jsonl"
    lines = [
        _line(
            {
                "episode_id": "e1",
                "content": "moved",
                "occurred_at": "2026-01-01T00:00:00Z",
                "facts": [_fact("ann", "Oslo", 1)],
            }
        ),
        _line({"facts": [_fact("bob", "Rome", 2, source_episode_id="e1")]}),
        "{not json\n",  # 3: malformed
        _line({"facts": [_fact("cyd", "Bern", 3)], "surprise": 1}),  # 4: unknown field
        _line({"facts": [_fact("dan", "Kyiv", 4, source_episode_id="nope")]}),  # 5: no such episode
        _line({"episode_id": "e1", "content": "other", "occurred_at": "2026-01-01T00:00:00Z"}),  # 6
        "x" * (1024 * 1024 + 10) + "\n",  # 7: over 1 MiB
        _line({"facts": [_fact("eve", "Lima", 5, source_episode_id="e1")]}),
    ]
    src.write_text("".join(lines))
    url = f"sqlite:///{db}"
    code = run_import(
        str(src),
        store_url=url,
        api_url=None,
        key=None,
        tenant="t",
        batch=10,
        reject_file=str(rejects),
    )
    assert code == 1
    refused = [json.loads(x) for x in rejects.read_text().splitlines()]
    assert [r["line"] for r in refused] == [3, 4, 5, 6, 7]
    assert [r["status"] for r in refused] == [400, 422, 422, 409, 413]
    assert "not valid JSON" in refused[0]["detail"]
    assert "surprise" in refused[1]["detail"]
    assert "episode 'nope' does not exist" in refused[2]["errors"][0]["reason"]
    assert "already exists with other content" in refused[3]["detail"]
    # Lines 1, 2 and 8 written; line 5 was batched with 2 and 8, retried alone, refused alone.
    assert _count(db, "t") == 3

    again = run_import(
        str(src),
        store_url=url,
        api_url=None,
        key=None,
        tenant="t",
        batch=10,
        reject_file=str(rejects),
    )
    assert again == 1
    assert _count(db, "t") == 3
    s = SqliteStore(db)
    try:
        versions = list(s.export_records(tenant_id="t", kind="version"))
    finally:
        s.close()
    assert len(versions) == 3  # nothing new at any system time


def test_a_clean_file_exits_0_and_an_unreadable_one_2(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    episode = {"episode_id": "e1", "content": "x", "occurred_at": "2026-01-01T00:00:00Z"}
    facts = [_fact("ann", "Oslo", 1, source_episode_id="e1"), _fact("bob", "Rome", 1)]
    facts[1]["source_episode_id"] = "e1"
    src.write_text(_line(episode) + _line({"facts": facts}))
    url = f"sqlite:///{tmp_path / 's.db'}"
    assert run_import(str(src), store_url=url, api_url=None, key=None, tenant="t") == 0
    missing = str(tmp_path / "missing.jsonl")
    assert run_import(missing, store_url=url, api_url=None, key=None, tenant="t") == 2
    out = tmp_path / "out.jsonl"
    with out.open("w") as f:
        code = run_export(
            store_url=url,
            api_url=None,
            key=None,
            tenant="t",
            kind=ExportKind.CURRENT,
            as_of=None,
            known_at=None,
            out=f,
        )
    assert code == 0
    assert sorted(json.loads(x)["subject"] for x in out.read_text().splitlines()) == ["ann", "bob"]


def _episode(eid: str, day: int, **kw: object) -> dict[str, object]:
    return {
        "episode_id": eid,
        "content": f"{eid} said",
        "occurred_at": f"2026-01-{day:02d}T00:00:00Z",
        **kw,
    }


class CountingSink(ServiceSink):
    """The real sink on a real store, counting the fact batches it is given."""

    def __init__(self, store: SqliteStore) -> None:
        super().__init__(MemoryService(store), tenant_id="t")
        self.batches: list[int] = []

    def facts(self, deltas: list[MemoryDelta], *, policy: ConflictPolicy) -> Written:
        self.batches.append(len(deltas))
        return super().facts(deltas, policy=policy)


def test_a_file_alternating_episodes_and_their_facts_is_written_in_full_batches(
    tmp_path: Path,
) -> None:
    """An export or a CRM dump puts each episode before its facts. Episodes alone do not
    cut the batch (one write per line made imports over HTTP ~1.3x slower), yet the
    outcome is the file order's: an episode carrying facts, and one cited before it
    appears, still wait for the facts read before them."""
    lines = []
    for i in range(6):  # e0 f0 e1 f1 ... : 6 episodes, 6 lines of 2 facts
        lines.append(_line(_episode(f"e{i}", i + 1)))
        facts = [_fact(f"p{i}{j}", "Oslo", i + 1, source_episode_id=f"e{i}") for j in range(2)]
        lines.append(_line({"facts": facts}))
    lines += [
        _line({"facts": [_fact("p00", "Rome", 11, source_episode_id="e5")]}),  # 13
        # 14: the same instant, another value: in file order Rome came first.
        _line(_episode("e8", 11, facts=[_fact("p00", "Lima", 11)])),
        _line({"facts": [_fact("late", "Rome", 12, source_episode_id="e9")]}),  # 15: before e9
        _line(_episode("e9", 12)),  # 16
        _line({"facts": [_fact("p01", "Bern", 12, source_episode_id="e9")]}),  # 17
    ]
    store = SqliteStore(tmp_path / "s.db")
    store.init()
    try:
        sink = CountingSink(store)
        rejects = io.StringIO()
        source = io.BytesIO("".join(lines).encode())
        report = import_lines(source, sink, rejects=rejects, batch=100)
        refused = {json.loads(x)["line"]: json.loads(x) for x in rejects.getvalue().splitlines()}
        # In file order: e8's Lima meets Rome at the same instant (409, nothing of the line
        # written); line 15 cites e9 before it exists (422).
        assert {n: r["status"] for n, r in refused.items()} == {14: 409, 15: 422}
        assert refused[14]["conflicting_source_episode_id"] == "e5"
        # 13 facts in one batch: the six episodes between them did not cut it.
        assert sink.batches == [13, 1, 1]
        assert (report.episodes, report.facts) == (7, 14)  # e8 refused with its fact
        now = FactQuery(as_of=None, known_at=utcnow(), limit=1000)
        current = {(f.subject, f.value) for f in store.facts(tenant_id="t", query=now)}
        assert ("p00", "Rome") in current
        assert ("p00", "Lima") not in current
        assert ("p01", "Bern") in current
        assert "late" not in {subject for subject, _ in current}
    finally:
        store.close()


def test_exporting_from_a_sqlite_file_that_is_not_there_creates_nothing(tmp_path: Path) -> None:
    """A mistyped path: exit 2 and a message, not an empty new file and "0 records"."""
    typo = tmp_path / "sgam-typo.db"
    out = io.StringIO()
    code = run_export(
        store_url=f"sqlite:///{typo}",
        api_url=None,
        key=None,
        tenant="t",
        kind=ExportKind.LEDGER,
        as_of=None,
        known_at=None,
        out=out,
    )
    assert code == 2
    assert not typo.exists()
    assert out.getvalue() == ""
