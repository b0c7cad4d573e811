"""WAL checkpoints run on the checkpoint thread, not in the commit of a request.

Real SQLite files; what is checked is where the checkpoint happens and that the thread
comes and goes with the writes.
"""

from __future__ import annotations

import gc
import os
import shutil
import signal
import sqlite3
import threading
from pathlib import Path

import pytest

from graph.stores.sqlite import checkpoint as checkpoint_module
from graph.stores.sqlite.checkpoint import BACKSTOP_PAGES, Checkpointer
from graph.stores.sqlite.connection import SqliteConnection
from tests.conftest import wait_until


def _opened(path: Path) -> tuple[SqliteConnection, Checkpointer]:
    """A connection to a file and the checkpointer its commits nudge."""
    conn = SqliteConnection(path)
    assert conn._checkpointer is not None
    return conn, conn._checkpointer


def rows_in_the_file_alone(path: Path, tmp_path: Path) -> int:
    """Rows of ``t`` in the database file without its write-ahead log: what checkpoints
    have copied there."""
    alone = tmp_path / "alone.db"
    shutil.copyfile(path, alone)
    other = sqlite3.connect(alone)
    try:
        return int(other.execute("SELECT count(*) FROM t").fetchone()[0])
    finally:
        other.close()


def test_a_commit_leaves_the_checkpoint_to_the_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.db"
    conn, checkpointer = _opened(path)
    try:
        with conn.write() as c:
            c.execute("CREATE TABLE t (x BLOB)")
        wait_until(lambda: checkpointer.checkpoints >= 1)  # the table is in the file
        # The request's connection checkpoints only past the backstop.
        assert conn.connect().execute("PRAGMA wal_autocheckpoint").fetchone()[0] == BACKSTOP_PAGES
        # 1,500 pages in one commit, with the thread held back: SQLite's default would
        # have checkpointed inside the commit (past 1,000 pages).
        monkeypatch.setattr(checkpointer, "nudge", lambda: None)
        with conn.write() as c:
            c.executemany("INSERT INTO t VALUES (?)", [(b"x" * 4000,) for _ in range(1500)])
        assert rows_in_the_file_alone(path, tmp_path) == 0
        monkeypatch.undo()
        before = checkpointer.checkpoints
        checkpointer.nudge()
        wait_until(lambda: checkpointer.checkpoints > before)
        assert rows_in_the_file_alone(path, tmp_path) == 1500
    finally:
        conn.close()


def test_the_thread_exits_when_idle_and_comes_back_with_the_next_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint_module, "IDLE_EXIT_S", 0.1)
    monkeypatch.setattr(checkpoint_module, "MIN_INTERVAL_S", 0.01)
    conn, checkpointer = _opened(tmp_path / "i.db")
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
    conn, checkpointer = _opened(tmp_path / "r.db")
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
    wait_until(lambda: checkpointer.attempts >= 1)  # the thread tried ...
    checkpointer.close()
    assert not path.exists()  # ... and made no file
    assert checkpointer.checkpoints == 0


def test_close_does_not_wait_for_the_pause_between_checkpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store closed right after a write (a test, a server shutting down) returns at once,
    not after the thread's pause between checkpoints."""
    monkeypatch.setattr(checkpoint_module, "MIN_INTERVAL_S", 60.0)
    conn, checkpointer = _opened(tmp_path / "p.db")
    with conn.write() as c:
        c.execute("CREATE TABLE t (x INTEGER)")
    wait_until(lambda: checkpointer.checkpoints >= 1)  # now in its 60 s pause
    thread = checkpointer._thread
    assert thread is not None
    checkpointer.close(timeout=5.0)
    assert not thread.is_alive()
    conn.close()


def test_a_forked_child_writes_whatever_the_parents_checkpointer_held(tmp_path: Path) -> None:
    """A fork while another thread starts the checkpoint thread (its lock held) must not
    leave the child stuck at the end of its first write, holding its writer turn."""
    conn, checkpointer = _opened(tmp_path / "k.db")
    with conn.write() as c:
        c.execute("CREATE TABLE t (x INTEGER)")
    conn.close()
    with checkpointer._lock:  # as during nudge() on another thread
        pid = os.fork()
        if pid == 0:  # the child: a hang is ended by the alarm, as a failure
            signal.alarm(10)
            with conn.write() as c:
                c.execute("INSERT INTO t VALUES (1)")
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert [r[0] for r in conn.read("SELECT x FROM t")] == [1]
    conn.close()


def test_close_closes_the_connections_of_every_thread(tmp_path: Path) -> None:
    """Each thread has its own connection; close() (on one thread) closes them all, so a
    process that opens and closes stores keeps no file handles behind."""
    path = tmp_path / "h.db"
    conn = SqliteConnection(path)
    with conn.write() as c:
        c.execute("CREATE TABLE t (x INTEGER)")

    def handles() -> int:
        fds = Path("/proc/self/fd")
        return sum(1 for fd in fds.iterdir() if _target(fd).startswith(str(path)))

    gc.disable()  # what is checked is close(), not the garbage collector
    try:
        threads = [threading.Thread(target=lambda: conn.read("SELECT x FROM t")) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert handles() >= 4
        conn.close()
        assert handles() == 0
    finally:
        gc.enable()


def _target(fd: Path) -> str:
    try:
        return os.readlink(fd)
    except OSError:  # closed since it was listed
        return ""
