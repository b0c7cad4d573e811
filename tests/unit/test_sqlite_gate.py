"""The SQLite write gate: this process's writers of a file take turns in arrival order.

A writer that runs transaction after transaction (a tenant purge) must not take the lock
again ahead of one that was already waiting; with a plain mutex (or SQLite's own polling
busy handler) it nearly always does.
"""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
from pathlib import Path
from types import FrameType

import pytest

from graph.errors import StoreFailedError, StoreUnavailableError
from graph.stores.sqlite import connection as connection_module
from graph.stores.sqlite import gate as gate_module
from graph.stores.sqlite.connection import SqliteConnection
from graph.stores.sqlite.gate import WriteGate, gate_for
from tests.conftest import wait_until


def test_a_releasing_holder_that_comes_straight_back_queues_behind_the_waiter() -> None:
    gate = WriteGate()
    order: list[str] = []
    assert gate.acquire(1.0)

    def waiter() -> None:
        assert gate.acquire(10.0)
        order.append("waiter")
        time.sleep(0.02)
        gate.release()

    t = threading.Thread(target=waiter)
    t.start()
    wait_until(lambda: gate.waiting == 1)
    gate.release()
    assert gate.acquire(10.0)  # handed to the waiter first: this waits for its release
    order.append("holder again")
    gate.release()
    t.join()
    assert order == ["waiter", "holder again"]


def test_waiters_are_served_in_arrival_order() -> None:
    gate = WriteGate()
    served: list[int] = []
    assert gate.acquire(1.0)

    def writer(i: int) -> None:
        assert gate.acquire(10.0)
        served.append(i)
        gate.release()

    threads = []
    for i in range(5):
        t = threading.Thread(target=writer, args=(i,))
        t.start()
        threads.append(t)
        wait_until(lambda n=i + 1: gate.waiting == n)
    gate.release()
    for t in threads:
        t.join()
    assert served == [0, 1, 2, 3, 4]


def test_a_wait_that_runs_out_leaves_the_queue_and_the_gate_usable() -> None:
    gate = WriteGate()
    assert gate.acquire(1.0)
    assert gate.acquire(0.05) is False
    assert gate.waiting == 0
    gate.release()
    assert gate.acquire(0.05)  # free again: taken at once
    gate.release()


def test_stores_on_one_file_share_its_gate(tmp_path: Path) -> None:
    a = SqliteConnection(tmp_path / "x.db")
    b = SqliteConnection(str(tmp_path / "." / "x.db"))
    assert a._gate is b._gate is gate_for(str(tmp_path / "x.db"))
    assert SqliteConnection(tmp_path / "y.db")._gate is not a._gate


def test_a_writer_that_never_gets_its_turn_gets_a_503_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection_module, "BUSY_TIMEOUT_S", 0.1)
    conn = SqliteConnection(tmp_path / "z.db")
    with conn.write() as c:
        c.execute("CREATE TABLE t (x INTEGER)")
    failed: list[BaseException] = []

    def other() -> None:
        try:
            with conn.write() as c:
                c.execute("INSERT INTO t VALUES (2)")
        except BaseException as e:
            failed.append(e)

    with conn.write() as c:
        c.execute("INSERT INTO t VALUES (1)")
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert len(failed) == 1
    assert isinstance(failed[0], StoreUnavailableError)
    # The gate's refusal (SQLite's own busy timeout would say "cannot be opened (begin)").
    assert "no turn to write within 0.1 s" in str(failed[0])
    assert [r[0] for r in conn.read("SELECT x FROM t")] == [1]
    conn.close()


def test_a_write_inside_a_write_on_one_thread_is_refused_not_deadlocked(tmp_path: Path) -> None:
    conn = SqliteConnection(tmp_path / "n.db")
    with conn.write() as c:
        c.execute("CREATE TABLE t (x INTEGER)")
    inner = pytest.raises(StoreFailedError, match="within a transaction")
    with inner, conn.write(), conn.write() as c:
        c.execute("INSERT INTO t VALUES (1)")
    with conn.write() as c:  # the gate was given back
        c.execute("INSERT INTO t VALUES (3)")
    assert [r[0] for r in conn.read("SELECT x FROM t")] == [3]
    conn.close()


def test_a_forked_child_finds_the_gate_free_whatever_the_parent_held(tmp_path: Path) -> None:
    gate = gate_for(str(tmp_path / "f.db"))
    assert gate.acquire(1.0)  # held by this (the parent's) thread across the fork
    try:
        pid = os.fork()
        if pid == 0:  # the child: one thread, nobody holds its gate
            os._exit(0 if gate_for(str(tmp_path / "f.db")).acquire(1.0) else 1)
        _, status = os.waitpid(pid, 0)
    finally:
        gate.release()
    assert os.waitstatus_to_exitcode(status) == 0


class Interrupted(Exception):
    pass


def test_a_waiter_interrupted_in_the_queue_leaves_it() -> None:
    """A signal (Ctrl-C, a timeout alarm) that ends a queued writer's wait must take it out
    of the queue: otherwise the turn is later handed to a thread that will never write,
    and every writer after it waits its full timeout and gets a 503."""
    gate = WriteGate()
    holding, done = threading.Event(), threading.Event()

    def holder() -> None:
        assert gate.acquire(1.0)
        holding.set()
        done.wait(10)
        gate.release()

    t = threading.Thread(target=holder)
    t.start()
    holding.wait(10)

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(Interrupted):
            gate.acquire(10.0)  # this (the main) thread queues, and is interrupted
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert gate.waiting == 0
    done.set()
    t.join()
    assert gate.acquire(0.5)  # the holder's release freed it: nobody dead holds it
    gate.release()


def test_each_in_memory_database_has_a_gate_of_its_own() -> None:
    a, b = SqliteConnection(":memory:"), SqliteConnection(":memory:")
    assert a._gate is not b._gate  # two databases: a write in one never waits for the other
    with a.write() as ca, b.write() as cb:  # nested across databases: no 503, no deadlock
        ca.execute("CREATE TABLE t (x INTEGER)")
        cb.execute("CREATE TABLE u (x INTEGER)")
    a.close()
    b.close()


def test_a_file_no_store_has_open_keeps_no_gate(tmp_path: Path) -> None:
    conn = SqliteConnection(tmp_path / "g.db")
    key = os.path.realpath(tmp_path / "g.db")
    assert gate_module._GATES.get(key) is conn._gate
    conn.close()
    del conn
    gc.collect()
    assert key not in gate_module._GATES
