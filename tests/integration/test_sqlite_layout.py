"""The SQLite file's layout version: an old file is migrated, a newer one refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from graph.errors import StoreUnavailableError
from graph.stores.sqlite.store import FILE_VERSION, SqliteStore


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
        c.execute("CREATE INDEX facts_timeline ON facts (tenant_id, timeline_key, retired_at)")
    s = SqliteStore(fresh)
    s.init()
    s.close()
    with sqlite3.connect(fresh) as c:
        names = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "facts_timeline" not in names
    assert "facts_timeline_current" in names
    assert _user_version(fresh) == FILE_VERSION


def test_a_newer_file_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    with sqlite3.connect(db) as c:
        c.execute(f"PRAGMA user_version = {FILE_VERSION + 1}")
    s = SqliteStore(db)
    with pytest.raises(StoreUnavailableError, match="newer than this sgam"):
        s.init()
    s.close()
