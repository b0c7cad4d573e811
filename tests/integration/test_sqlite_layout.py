"""The SQLite file's layout version: an old file is migrated, a newer one refused."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graph import EpisodeCreate, EpisodeKind, MemoryDelta, MemoryService
from graph.errors import StoreUnavailableError
from graph.model import EpisodeStatus
from graph.stores.sqlite.store import FILE_VERSION, SqliteStore

LATER = datetime.now(UTC) + timedelta(minutes=5)


def _user_version(path: Path) -> int:
    with sqlite3.connect(path) as c:
        return int(c.execute("PRAGMA user_version").fetchone()[0])


def test_a_first_layout_file_is_migrated(tmp_path: Path) -> None:
    fresh = tmp_path / "new.db"
    s = SqliteStore(fresh)
    s.init()
    s.close()
    assert _user_version(fresh) == FILE_VERSION
    with sqlite3.connect(fresh) as c:
        c.execute("PRAGMA user_version = 0")
        c.execute("ALTER TABLE episodes DROP COLUMN usage_json")  # not in the first layout
        c.execute("CREATE INDEX facts_timeline ON facts (tenant_id, timeline_key, retired_at)")
    s = SqliteStore(fresh)
    s.init()
    s.close()
    with sqlite3.connect(fresh) as c:
        names = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "facts_timeline" not in names
    assert "facts_timeline_current" in names
    assert _user_version(fresh) == FILE_VERSION


def test_a_version_1_file_gets_the_usage_column_and_keeps_its_episodes(tmp_path: Path) -> None:
    db = tmp_path / "v1.db"
    s = SqliteStore(db)
    s.init()
    s.close()
    with sqlite3.connect(db) as c:  # a file written by the layout before model usage
        c.execute("ALTER TABLE episodes DROP COLUMN usage_json")
        c.execute("PRAGMA user_version = 1")
    at = datetime(2026, 6, 1, tzinfo=UTC)
    body = EpisodeCreate(episode_id="old", content="x", occurred_at=at)
    with sqlite3.connect(db) as c:
        columns = {r[1] for r in c.execute("PRAGMA table_info(episodes)")}
    assert "usage_json" not in columns
    s = SqliteStore(db)
    s.init()
    try:
        assert _user_version(db) == FILE_VERSION == 3
        MemoryService(s).add_episode(tenant_id="t", body=body, status=EpisodeStatus.PENDING)
        episode = s.get_episode(tenant_id="t", episode_id="old")
        assert episode is not None
        assert episode.usage is None
        claimed = s.queue.claim_episode(
            tenant_id="t",
            episode_id="old",
            owner="w",
            now=datetime.now(UTC),
            lease_until=LATER,
            from_statuses={"pending"},
        )
        assert claimed is not None
        usage = {"model": "m", "prompt_tokens": 7, "completion_tokens": 3, "calls": 1}
        done = s.queue.complete(
            tenant_id="t", episode_id="old", owner="w", rejected=[], usage=usage
        )
        assert done
        episode = s.get_episode(tenant_id="t", episode_id="old")
        assert episode is not None
        assert episode.usage is not None
        assert (episode.usage.prompt_tokens, episode.usage.completion_tokens) == (7, 3)
    finally:
        s.close()


def test_a_newer_file_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    with sqlite3.connect(db) as c:
        c.execute(f"PRAGMA user_version = {FILE_VERSION + 1}")
    s = SqliteStore(db)
    with pytest.raises(StoreUnavailableError, match="newer than this sgam"):
        s.init()
    s.close()


def test_a_version_2_file_writes_fact_documents_once_per_fact(tmp_path: Path) -> None:
    """Layout 3 writes a fact's search document from the store, not from a trigger per
    version: a version-2 file loses the trigger (which would write it twice) and the
    unused facts_source index, and its facts stay searchable, one document per fact."""
    db = tmp_path / "v2.db"
    s = SqliteStore(db)
    s.init()
    s.close()
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA user_version = 2")
        c.execute("CREATE INDEX facts_source ON facts (tenant_id, source_episode_id)")
        c.execute(
            "CREATE TRIGGER search_facts_ai AFTER INSERT ON facts BEGIN"
            " INSERT INTO search_docs (tenant_id, kind, item_id, scope, body)"
            " VALUES (new.tenant_id, 'fact', new.fact_id || '-trigger', 'x', 'x'); END"
        )
    s = SqliteStore(db)
    s.init()
    svc = MemoryService(s)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    svc.add_episode(
        tenant_id="t",
        body=EpisodeCreate(episode_id="e1", kind=EpisodeKind.EVENT, content="x", occurred_at=at),
    )
    first = svc.write_facts(
        tenant_id="t",
        deltas=[
            MemoryDelta(subject="mira", predicate="lives_in", value="Porto", source_episode_id="e1")
        ],
    )
    # A late fact cuts it: the cut version is a second version of the same fact id.
    svc.write_facts(
        tenant_id="t",
        deltas=[
            MemoryDelta(
                subject="mira",
                predicate="lives_in",
                value="Lisbon",
                valid_from=at + timedelta(days=30),
                source_episode_id="e1",
            ),
        ],
    )
    s.close()
    assert _user_version(db) == FILE_VERSION
    with sqlite3.connect(db) as c:
        names = {r[0] for r in c.execute("SELECT name FROM sqlite_master")}
        docs = c.execute(
            "SELECT item_id, body FROM search_docs WHERE kind = 'fact' ORDER BY doc"
        ).fetchall()
        versions = c.execute(
            "SELECT count(*) FROM facts WHERE fact_id = ?", (first.facts[0].fact_id,)
        ).fetchone()[0]
    assert "search_facts_ai" not in names
    assert "facts_source" not in names
    assert versions == 2
    assert [b for _, b in docs] == ["mira lives in Porto", "mira lives in Lisbon"]
    assert docs[0][0] == first.facts[0].fact_id
