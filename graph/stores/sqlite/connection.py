"""The one SQLite connection object that the store, its search index and its queue share.

One file in WAL mode, one stdlib connection per thread. Every write batch is one
``BEGIN IMMEDIATE`` transaction, which takes SQLite's single write lock before the first
read and so also serialises writers. Every connection gets the search index's SQL
functions (graph.stores.sqlite.terms): its triggers call them, so a connection without
them cannot write a searchable item. SQLite errors become the project's own here.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from graph.errors import ConflictError, SgamError, StoreFailedError, StoreUnavailableError
from graph.stores.sqlite import terms
from graph.stores.sqlite.checkpoint import BACKSTOP_PAGES, Checkpointer
from graph.stores.sqlite.gate import gate_for
from graph.tracing import traced

_log = logging.getLogger(__name__)

# Result codes (the primary code is the low byte) worth a retry: another connection holds
# the lock, or the file cannot be opened (a mount not there yet) — the store is
# unavailable, as a Neo4j that does not answer is. Every other error (no such table,
# disk I/O, a corrupt file, ...) is a permanent failure.
_TRANSIENT_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN})

# How long a writer waits for its turn (the gate) and then for SQLite's lock, before a 503.
BUSY_TIMEOUT_S = 30.0


def translated(e: sqlite3.DatabaseError, *, what: str) -> SgamError:
    """A SQLite error as the project's: busy/locked → 503 with Retry-After (retry later);
    anything else → :class:`StoreFailedError` (a server fault, logged, no retry hint)."""
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in _TRANSIENT_CODES:
        return StoreUnavailableError(f"SQLite is busy or cannot be opened ({what}): {e}")
    return StoreFailedError(f"SQLite {what} failed: {e}")


class _Held:
    """The SIGINT handler while SQLite works: notes the signal, raises nothing."""

    def __init__(self) -> None:
        self.signalled = False

    def __call__(self, signum: int, frame: object) -> None:
        self.signalled = True


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Ctrl-C held off while SQLite works, and raised as soon as it is done. SQLite runs
    the store's SQL functions (the fulltext triggers', graph.stores.sqlite.terms) on every
    indexed insert, and sqlite3 reports anything they raise, a KeyboardInterrupt
    included, as "user-defined function raised exception": a Ctrl-C landing there was a
    store failure, and ``sgam import`` refused the line (or wrote the batch again line by
    line) and went on to the end. Python runs signal handlers on the main thread, so
    only there; a handler that raises nothing (or none set from Python) is left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous) or isinstance(previous, _Held):
        yield  # the default action or ignored, or an outer call already holds it
        return
    held = _Held()
    signal.signal(signal.SIGINT, held)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held.signalled:
            signal.raise_signal(signal.SIGINT)  # to the handler it was meant for


class SqliteConnection:
    """Thread-local connections to one database file, with read and write helpers."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self._gate = gate_for(self.path)
        # No WAL, nothing to checkpoint, for an in-memory database.
        self._checkpointer = None if self.path == ":memory:" else Checkpointer(self.path)

    def connect(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                if self.path != ":memory:":
                    Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                # Each connection is used by its own thread only; check_same_thread=False
                # lets close() (on another thread) close them all instead of leaving file
                # handles to the garbage collector.
                conn = sqlite3.connect(
                    self.path,
                    isolation_level=None,
                    timeout=BUSY_TIMEOUT_S,
                    check_same_thread=False,
                )
            except (OSError, sqlite3.Error) as e:
                raise StoreUnavailableError(f"cannot open {self.path}: {e}") from e
            conn.row_factory = sqlite3.Row
            # The search index's triggers and content view compute its terms in Python.
            terms.register(conn)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA foreign_keys = ON")
            # Bulk writes touch several indexes per row: a 64 MiB page cache keeps their
            # upper levels in memory; WAL + synchronous=NORMAL stays durable at checkpoints.
            conn.execute("PRAGMA cache_size = -65536")
            # Checkpoints run on the checkpoint thread (graph.stores.sqlite.checkpoint),
            # not inside whichever request's commit passes 1,000 WAL pages.
            if self._checkpointer is not None:
                conn.execute(f"PRAGMA wal_autocheckpoint = {BACKSTOP_PAGES}")
            conn.execute("PRAGMA temp_store = MEMORY")
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    @contextmanager
    @traced("store.write", attrs={"db.system": "sqlite"})
    def write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: commit on success, roll back on any error.
        This process's writers of the file take their turns in arrival order (the gate)."""
        conn = self.connect()
        # A write inside a write on one thread is refused by SQLite below, as before; the
        # gate must not deadlock on it first.
        nested = getattr(self._local, "writing", False)
        held = committed = False
        # Outermost: a Ctrl-C is raised once the gate is released, never between the
        # commit and the release.
        with interrupts_deferred():
            try:
                if not nested:
                    if not self._gate.acquire(BUSY_TIMEOUT_S):
                        raise StoreUnavailableError(
                            "SQLite is busy (begin): no turn to write within"
                            f" {BUSY_TIMEOUT_S:g} s, the file's other writers in this"
                            " process held it"
                        )
                    held = True
                    self._local.writing = True
                yield from self._transaction(conn)
                committed = True
            finally:
                if held:
                    self._local.writing = False
                    self._gate.release()
        if committed and not nested and self._checkpointer is not None:
            # After the turn: the next writer does not wait for a thread to start. A thread
            # that cannot start (the process's limit) must not fail a committed write; the
            # backstop checkpoint still runs in the commits.
            try:
                self._checkpointer.nudge()
            except RuntimeError:
                _log.warning("cannot start the checkpoint thread of %s", self.path, exc_info=True)

    def _transaction(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as e:
            raise translated(e, what="begin") from e
        try:
            yield conn
        except sqlite3.IntegrityError:
            conn.execute("ROLLBACK")
            raise  # the store turns it into a ConflictError
        except sqlite3.DatabaseError as e:
            _rollback_quietly(conn)
            raise translated(e, what="write") from e
        except BaseException:
            _rollback_quietly(conn)
            raise
        else:
            try:
                conn.execute("COMMIT")
            except sqlite3.IntegrityError as e:
                conn.execute("ROLLBACK")
                raise ConflictError(f"constraint violated: {e}") from e
            except sqlite3.DatabaseError as e:
                _rollback_quietly(conn)
                raise translated(e, what="commit") from e

    @traced("store.query", args={"sql": "db.query.text"}, attrs={"db.system": "sqlite"})
    def read(self, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        try:
            with interrupts_deferred():
                return self.connect().execute(sql, params).fetchall()
        except sqlite3.DatabaseError as e:
            raise translated(e, what="read") from e

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads of this thread inside see one state of the file: one read transaction,
        a WAL snapshot that writers do not wait for (checkpoints stop at it while it
        lasts, so the log grows meanwhile). Nested: the outer one holds."""
        conn = self.connect()
        if conn.in_transaction:
            yield
            return
        try:
            conn.execute("BEGIN")
            # The snapshot starts at the first read, not at BEGIN.
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
        except sqlite3.DatabaseError as e:
            _rollback_quietly(conn)
            raise translated(e, what="read") from e
        try:
            yield
        finally:
            _rollback_quietly(conn)  # it wrote nothing: ending it is all there is to do

    def checkpoint(self) -> None:
        """A PASSIVE checkpoint now, in this thread (outside any write turn): a bulk job
        pays for its own pages, rather than leaving the log to outgrow the checkpoint
        thread and reach the backstop in another request's commit."""
        with contextlib.suppress(sqlite3.Error):
            self.connect().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def executescript(self, script: str) -> None:
        self.connect().executescript(script)

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.close()
        with self._conns_lock:
            for c in self._conns:
                with contextlib.suppress(sqlite3.Error):
                    c.close()
            self._conns.clear()
        self._local = threading.local()


def _rollback_quietly(conn: sqlite3.Connection) -> None:
    """Roll back after a failure; a rollback that fails too must not hide the first error
    (SQLite may already have rolled back, e.g. after a disk I/O error)."""
    with contextlib.suppress(sqlite3.Error):
        conn.execute("ROLLBACK")


__all__ = ["SqliteConnection", "translated"]
