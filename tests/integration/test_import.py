"""``sgam import`` on a real SQLite store: bad lines refused alone, the rest written,
re-running writes nothing new, exit codes 0/1/2."""

from __future__ import annotations

import json
from pathlib import Path

from api.transfer.commands import run_export, run_import
from api.transfer.exporter import ExportKind
from graph.model import FactQuery
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
