"""A Neo4j that accepts connections but never answers: sgam gives up within seconds.

A frozen Neo4j (SIGSTOP, a stuck JVM) or a proxy in front of one that is gone keeps
accepting TCP connections while nothing answers the Bolt handshake. With the driver's
defaults every request then waited two minutes (a 60 s handshake deadline, twice with the
managed retry) before its 503; a write, run again by the service on a lost connection,
longer still. Here a loopback listener that accepts and stays silent stands in for it.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest

from graph.errors import StoreUnavailableError
from graph.model import ConflictPolicy, MemoryDelta
from graph.service import MemoryService
from graph.stores.neo4j.store import Neo4jStore

pytestmark = pytest.mark.neo4j

# Well above the bound of one call (two handshakes of CONNECT_SECONDS), well below the
# two minutes each took before.
DEADLINE_SECONDS = 40.0


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A bolt URL whose listener accepts every connection and never sends a byte."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"bolt://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
        for conn in held:
            conn.close()


def outcome(call: Callable[[], object]) -> tuple[BaseException | None, float]:
    """What ``call`` raised and how long it took; fails once DEADLINE_SECONDS pass."""
    result: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
            result.append(None)
        except BaseException as e:  # collected for the assertion below
            result.append(e)

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(DEADLINE_SECONDS)
    took = time.monotonic() - started
    assert result, f"still waiting for the silent server after {took:.0f} s"
    return result[0], took


def test_a_silent_server_is_store_unavailable_within_seconds(silent_url: str) -> None:
    store = Neo4jStore.from_url(silent_url)
    svc = MemoryService(store)
    delta = MemoryDelta(
        subject="a", predicate="status", value="open", valid_from=datetime(2026, 1, 1, tzinfo=UTC)
    )
    try:
        error, took = outcome(store.ping)
        assert isinstance(error, StoreUnavailableError), error
        assert took < DEADLINE_SECONDS
        error, took = outcome(
            lambda: svc.write_facts(
                tenant_id="t-silent", deltas=[delta], policy=ConflictPolicy.LATEST_RECORDED_WINS
            )
        )
        assert isinstance(error, StoreUnavailableError), error
        assert took < DEADLINE_SECONDS
    finally:
        store.close()
