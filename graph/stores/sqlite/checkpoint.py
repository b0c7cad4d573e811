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
import sqlite3
import threading
import time
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
        self._lock = threading.Lock()
        self._due = threading.Event()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.checkpoints = 0  # completed, for tests and diagnostics

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
            self._stopping = True
            thread = self._thread
        self._due.set()
        if thread is not None:
            thread.join(timeout)
        with self._lock:
            self._stopping = False

    def _run(self) -> None:
        while True:
            if not self._due.wait(IDLE_EXIT_S):
                with self._lock:
                    if not self._due.is_set():  # idle: a later nudge starts a new thread
                        self._thread = None
                        return
                continue
            self._due.clear()
            with self._lock:
                if self._stopping:
                    self._thread = None
                    return
            self._checkpoint()
            time.sleep(MIN_INTERVAL_S)  # commits meanwhile are taken by the next one

    def _checkpoint(self) -> None:
        # A missing file or a busy checkpointer elsewhere: nothing to do until the next nudge.
        with contextlib.suppress(sqlite3.Error):
            conn = sqlite3.connect(self.uri, uri=True, timeout=0)
            try:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                self.checkpoints += 1
            finally:
                conn.close()


__all__ = ["BACKSTOP_PAGES", "IDLE_EXIT_S", "MIN_INTERVAL_S", "Checkpointer"]
