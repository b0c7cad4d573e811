"""WAL checkpoints run on the checkpoint thread, not in the commit of a request.

Real SQLite files; what is checked is where the checkpoint happens and that the thread
comes and goes with the writes.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from graph.stores.sqlite import checkpoint as checkpoint_module
from graph.stores.sqlite.checkpoint import BACKSTOP_PAGES, Checkpointer
from graph.stores.sqlite.connection import SqliteConnection
from tests.conftest import wait_until


def wal_frames(path: Path) -> int:
    """Frames in the file's write-ahead log (its header is 32 bytes, a frame 24 + page)."""
    wal = Path(str(path) + "-wal")
    return max(0, (wal.stat().st_size - 32) // (24 + 4096)) if wal.exists() else 0


def test_a_commit_leaves_the_checkpoint_to_the_thread(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    conn = SqliteConnection(path)
    try:
        with conn.write() as c:
            c.execute("CREATE TABLE t (x BLOB)")
        # The request's connection checkpoints only past the backstop.
        assert conn.connect().execute("PRAGMA wal_autocheckpoint").fetchone()[0] == BACKSTOP_PAGES
        checkpointer = conn._checkpointer
        assert checkpointer is not None
        wait_until(lambda: checkpointer.checkpoints >= 1)
        before = checkpointer.checkpoints
        # 1,500 pages in one commit: SQLite's default would checkpoint inside it (1,000).
        with conn.write() as c:
            c.executemany("INSERT INTO t VALUES (?)", [(b"x" * 4000,) for _ in range(1500)])
        assert wal_frames(path) >= 1500
        wait_until(lambda: checkpointer.checkpoints > before)
        # Checkpointed: the database file alone, without its log, holds every row.
        alone = tmp_path / "alone.db"
        shutil.copyfile(path, alone)
        other = sqlite3.connect(alone)
        assert other.execute("SELECT count(*) FROM t").fetchone()[0] == 1500
        other.close()
    finally:
        conn.close()


def test_the_thread_exits_when_idle_and_comes_back_with_the_next_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint_module, "IDLE_EXIT_S", 0.1)
    monkeypatch.setattr(checkpoint_module, "MIN_INTERVAL_S", 0.01)
    conn = SqliteConnection(tmp_path / "i.db")
    checkpointer = conn._checkpointer
    assert checkpointer is not None
    try:
        with conn.write() as c:
            c.execute("CREATE TABLE t (x INTEGER)")
        wait_until(lambda: checkpointer.checkpoints >= 1)
        wait_until(lambda: checkpointer._thread is None)  # idle: gone
        with conn.write() as c:
            c.execute("INSERT INTO t VALUES (1)")
        wait_until(lambda: checkpointer.checkpoints >= 2)
    finally:
        conn.close()
    assert checkpointer._thread is None  # closed: no thread left behind


def test_a_closed_store_used_again_checkpoints_again(tmp_path: Path) -> None:
    conn = SqliteConnection(tmp_path / "r.db")
    checkpointer = conn._checkpointer
    assert checkpointer is not None
    with conn.write() as c:
        c.execute("CREATE TABLE t (x INTEGER)")
    conn.close()
    done = checkpointer.checkpoints
    with conn.write() as c:
        c.execute("INSERT INTO t VALUES (1)")
    wait_until(lambda: checkpointer.checkpoints > done)
    conn.close()


def test_a_checkpoint_never_creates_a_deleted_file(tmp_path: Path) -> None:
    path = tmp_path / "gone.db"
    checkpointer = Checkpointer(str(path))
    checkpointer.nudge()
    wait_until(lambda: checkpointer._thread is None or not checkpointer._due.is_set())
    checkpointer.close()
    assert not path.exists()
    assert checkpointer.checkpoints == 0
