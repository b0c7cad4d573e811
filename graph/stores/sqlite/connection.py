"""The one SQLite connection object that the store, its search index and its queue share.

One file in WAL mode, one stdlib connection per thread. Every write batch is one
``BEGIN IMMEDIATE`` transaction, which takes SQLite's single write lock before the first
read and so also serialises writers. SQLite errors become the project's own here.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from graph.errors import ConflictError, StoreUnavailableError
from graph.tracing import traced


class SqliteConnection:
    """Thread-local connections to one database file, with read and write helpers."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()

    def connect(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                if self.path != ":memory:":
                    Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
            except (OSError, sqlite3.Error) as e:
                raise StoreUnavailableError(f"cannot open {self.path}: {e}") from e
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("PRAGMA foreign_keys = ON")
            # Bulk writes touch several indexes per row: a 64 MiB page cache keeps their
            # upper levels in memory; WAL + synchronous=NORMAL stays durable at checkpoints.
            conn.execute("PRAGMA cache_size = -65536")
            conn.execute("PRAGMA temp_store = MEMORY")
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    @contextmanager
    @traced("store.write", attrs={"db.system": "sqlite"})
    def write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: commit on success, roll back on any error."""
        conn = self.connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            raise StoreUnavailableError(f"SQLite is busy: {e}") from e
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            try:
                conn.execute("COMMIT")
            except sqlite3.IntegrityError as e:
                conn.execute("ROLLBACK")
                raise ConflictError(f"constraint violated: {e}") from e

    @traced("store.query", args={"sql": "db.query.text"}, attrs={"db.system": "sqlite"})
    def read(self, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        try:
            return self.connect().execute(sql, params).fetchall()
        except sqlite3.OperationalError as e:
            raise StoreUnavailableError(f"SQLite read failed: {e}") from e

    def executescript(self, script: str) -> None:
        self.connect().executescript(script)

    def close(self) -> None:
        with self._conns_lock:
            for c in self._conns:
                # A connection made in a thread that is gone may refuse; nothing to flush.
                with contextlib.suppress(sqlite3.ProgrammingError):
                    c.close()
            self._conns.clear()
        self._local = threading.local()


__all__ = ["SqliteConnection"]
