"""`sgam serve` killed with SIGKILL under concurrent writers, then started again.

Three threads post fact batches over real HTTP. Once some batches are acknowledged the
server process is killed mid-load (no handler runs), the writers see broken connections,
and a new server is started on the same store. Then: every acknowledged batch is there
whole; every other batch (refused, or in doubt because its connection broke) is there
whole or not at all; and on every timeline of the tenant the current versions do not
overlap and at most one is open.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.support import (
    COUNT_FACTS,
    Load,
    check_batches,
    found_batches,
    free_port,
    neo4j_invariants,
    purge_neo4j,
    serve,
    sqlite_invariants,
    wait_ready,
)

ACKNOWLEDGED_BEFORE_KILL = 30  # batches; the kill lands while the writers keep posting
AFTER_RESTART = 10  # batches acknowledged by the new server before the load stops


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path, tenant: str) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'sgam.db'}"
        return
    uri: str = request.getfixturevalue("neo4j_uri")
    yield uri
    purge_neo4j(uri, tenant)


def test_kill_9_of_serve_loses_no_acknowledged_write(
    store_url: str, tmp_path: Path, tenant: str
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    first = serve(store_url, port, log=log)
    second = None
    load = Load(url, tenant)
    try:
        wait_ready(first, url)
        load.start()
        load.wait_acknowledged(ACKNOWLEDGED_BEFORE_KILL)
        first.kill9()
        acknowledged_at_kill = len(load.acknowledged)
        time.sleep(0.5)  # the writers meet the dead port
        second = serve(store_url, port, log=log)
        wait_ready(second, url)
        load.wait_acknowledged(acknowledged_at_kill + AFTER_RESTART)
        load.finish()
        found = found_batches(url, tenant)
    finally:
        load.stop.set()
        first.stop()
        if second is not None:
            second.stop()
    whole = check_batches(load, found)
    if store_url.startswith("sqlite"):
        timelines = sqlite_invariants(Path(store_url.removeprefix("sqlite:///")), tenant)
    else:
        timelines = neo4j_invariants(store_url, tenant)
    store = "sqlite" if store_url.startswith("sqlite") else "neo4j"
    print(
        f"\nfaults: kill -9 serve ({store}): batches attempted {len(load.attempted)},"
        f" acknowledged {len(load.acknowledged)} ({acknowledged_at_kill} before the kill),"
        f" in doubt {len(load.in_doubt)}, found whole {whole}, half-written 0,"
        f" refused while down (not sent) {load.unsent};"
        f" timelines checked {timelines}; answers {dict(sorted(load.answers.items()))}"
    )
    assert not load.errors, load.errors
    assert len(load.acknowledged) >= acknowledged_at_kill + AFTER_RESTART
    # Each count fact is a timeline of its own, beside each writer's and the shared one.
    assert timelines == whole * COUNT_FACTS + load.writers + 1
