"""WAL checkpoints on a thread of their own, not in the request that commits.

By default SQLite checkpoints inside the commit that takes the write-ahead log past 1,000
pages: whichever request commits then copies every page written since the last checkpoint
into the database file and syncs it, so an unrelated request pays for a bulk job's pages
(and holds its writer turn, graph.stores.sqlite.gate, meanwhile). Beside a tenant erasure,
another tenant's one-fact writes had a p50 of 21 ms with checkpoints in the commits and
3 ms with them here, and the erasure took 63 s instead of 101 s (bench/purge_stall.py
--erase). The store's connections move the automatic checkpoint out to
:data:`BACKSTOP_PAGES` and every commit nudges this thread instead, which
runs a PASSIVE checkpoint (it never waits for, nor blocks, readers and writers) at most
every :data:`MIN_INTERVAL_S`, and exits once the file has been idle for
:data:`IDLE_EXIT_S`, so a store left open holds no thread and no file handle.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import weakref
from pathlib import Path

MIN_INTERVAL_S = 0.5
IDLE_EXIT_S = 5.0
# The commit-time checkpoint stays as a backstop, past a log this size (pages of 4 KiB,
# ~100 MiB), should this thread fall behind or fail.
BACKSTOP_PAGES = 25_000


class Checkpointer:
    """The checkpoint thread of one database file, started on demand."""

    def __init__(self, path: str) -> None:
        # mode=rw: a checkpoint never creates a file that was deleted meanwhile.
        self.uri = Path(path).resolve().as_uri() + "?mode=rw"
        self._reset()
        self.checkpoints = 0  # completed, for tests and diagnostics
        self.attempts = 0  # tried, whether or not there was a file to checkpoint
        _LIVE.add(self)

    def _reset(self) -> None:
        """No thread, nothing due: a new checkpointer, or one in a forked child (where the
        parent's thread does not exist and its lock may have been held at the fork)."""
        self._lock = threading.Lock()
        self._due = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def nudge(self) -> None:
        """Something was committed: checkpoint soon."""
        self._due.set()
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(
                target=self._run, name="sgam-sqlite-checkpoint", daemon=True
            )
            self._thread.start()

    def close(self, timeout: float = 10.0) -> None:
        """Stop the thread (after the checkpoint it may be running); the next commit of a
        store used again starts another."""
        with self._lock:
            self._stop.set()
            thread = self._thread
        self._due.set()  # wakes a thread waiting for work
        if thread is not None:
            thread.join(timeout)
        with self._lock:
            self._stop.clear()

    def _run(self) -> None:
        stop, due = self._stop, self._due
        while True:
            if not due.wait(IDLE_EXIT_S):
                with self._lock:
                    if not due.is_set():  # idle: a later nudge starts a new thread
                        self._thread = None
                        return
                continue
            due.clear()
            if stop.is_set():
                break
            self._checkpoint()
            # Commits meanwhile are taken by the next checkpoint; close() does not wait.
            if stop.wait(MIN_INTERVAL_S):
                break
        with self._lock:
            self._thread = None

    def _checkpoint(self) -> None:
        # A missing file or a busy checkpointer elsewhere: nothing to do until the next nudge.
        self.attempts += 1
        with contextlib.suppress(sqlite3.Error):
            conn = sqlite3.connect(self.uri, uri=True, timeout=0)
            try:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                self.checkpoints += 1
            finally:
                conn.close()


_LIVE: weakref.WeakSet[Checkpointer] = weakref.WeakSet()


def _reset_after_fork() -> None:
    for checkpointer in list(_LIVE):
        checkpointer._reset()


os.register_at_fork(after_in_child=_reset_after_fork)

__all__ = ["BACKSTOP_PAGES", "IDLE_EXIT_S", "MIN_INTERVAL_S", "Checkpointer"]
