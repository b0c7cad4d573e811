"""First come, first served for the writers of one SQLite file in this process.

SQLite has one writer lock per file, and a connection that finds it taken polls for it,
sleeping between tries (up to 100 ms at a time). A thread that runs transaction after
transaction (a tenant purge, an import, the indexer) takes it again within microseconds of
each commit and wins nearly every race against a request that polls: beside a tenant
erasure made of ~50 ms transactions, another tenant's one-fact writes waited up to
1.3-4.9 s without the gate, and 0.36-0.49 s with it in two runs of three (the third's
5.2 s came from the checkpoint backstop; bench/purge_stall.py --erase). The
gate queues this process's writers and hands the lock over in arrival order, so a writer
waits for the transactions ahead of it, not for luck. A turn ends at the commit; the
checkpoint after it runs elsewhere (graph.stores.sqlite.checkpoint). Writers in other
processes still meet SQLite's own lock and busy timeout.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import deque


class WriteGate:
    """A FIFO mutex with a timeout: ``release`` hands it straight to the longest waiter."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._held = False
        self._waiters: deque[threading.Event] = deque()

    def acquire(self, timeout: float) -> bool:
        """Take the gate, waiting behind earlier arrivals; False after ``timeout`` s."""
        with self._mutex:
            if not self._held:
                self._held = True
                return True
            turn = threading.Event()
            self._waiters.append(turn)
        try:
            if turn.wait(timeout):
                return True
        except BaseException:
            # Interrupted while queued (KeyboardInterrupt, an async exception): leave the
            # queue, or pass on a turn handed over meanwhile, or every later writer waits
            # behind a thread that will never write.
            with self._mutex:
                if turn.is_set():
                    self._hand_over()
                else:
                    self._waiters.remove(turn)
            raise
        with self._mutex:
            if turn.is_set():  # handed over as the wait ran out: it is ours
                return True
            self._waiters.remove(turn)
            return False

    def release(self) -> None:
        with self._mutex:
            self._hand_over()

    def _hand_over(self) -> None:
        """The holder is done (called under the mutex)."""
        if self._waiters:
            self._waiters.popleft().set()  # still held: now by that waiter
        else:
            self._held = False

    @property
    def waiting(self) -> int:
        """Writers queued behind the holder."""
        with self._mutex:
            return len(self._waiters)


# Held by the connections that use them: a file no store has open any more has no gate.
_GATES: weakref.WeakValueDictionary[str, WriteGate] = weakref.WeakValueDictionary()
_GATES_LOCK = threading.Lock()


def gate_for(path: str) -> WriteGate:
    """The one gate of a database file in this process (every store and connection object
    opened on it shares it). Each ``:memory:`` database is a database of its own, and so
    gets a gate of its own."""
    if path == ":memory:":
        return WriteGate()
    key = os.path.realpath(path)
    with _GATES_LOCK:
        gate = _GATES.get(key)
        if gate is None:
            gate = _GATES[key] = WriteGate()
        return gate


def _reopen_after_fork() -> None:
    """A forked child has one thread: no gate is held or awaited there, whatever the
    parent's threads were doing at the fork."""
    global _GATES_LOCK
    _GATES_LOCK = threading.Lock()
    for gate in list(_GATES.values()):
        gate.__init__()  # type: ignore[misc]


os.register_at_fork(after_in_child=_reopen_after_fork)

__all__ = ["WriteGate", "gate_for"]
