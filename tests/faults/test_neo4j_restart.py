"""A Neo4j that stops and comes back: sgam answers 503 with Retry-After meanwhile (never
500), recovers by itself, and every write it acknowledged is there afterwards.

A private Neo4j (its own launcher state dir, so the shared test server is untouched) is
stopped with SIGTERM and started again with the very same command line: same JVM, same
data dir, same port. A real `sgam serve` runs on loopback against it, under the write
load of three threads posting fact batches. Neo4j takes from half a minute to three
minutes to start on a loaded machine, hence the long deadlines: they bound the test,
they are not what it measures.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.faults.support import (
    ROOT,
    Load,
    check_batches,
    found_batches,
    free_port,
    neo4j_invariants,
    serve,
    wait_ready,
)

pytestmark = pytest.mark.neo4j

LAUNCHER = ROOT / "tools" / "neo4j" / "neo4j.sh"
# A JVM that starts quicker on a loaded machine (C1 only, one GC thread): the restart is
# what the test waits for.
JAVA_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
START_SECONDS = 400  # the launcher's own deadline, and the restart's
ACKNOWLEDGED_BEFORE_STOP = 20
AFTER_RESTART = 10
# Rounds of (readyz, a read) answered while Neo4j is down; each waits out driver retries.
DOWN_PROBES = 1


class PrivateNeo4j:
    def __init__(self, state: Path) -> None:
        self.state = state
        self.env = {
            **os.environ,
            "SGAM_NEO4J_STATE_DIR": str(state),
            "SGAM_NEO4J_START_TIMEOUT": str(START_SECONDS),
            "SGAM_NEO4J_JAVA_OPTS": JAVA_OPTS,
        }
        self.proc: subprocess.Popen[bytes] | None = None
        out = subprocess.run(
            ["bash", str(LAUNCHER), "up"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=START_SECONDS + 600,  # a first run builds the launcher with Maven
            check=False,
            stdin=subprocess.DEVNULL,
        )
        assert out.returncode == 0, f"private Neo4j did not start: {out.stderr[-2000:]}"
        self.uri = out.stdout.strip().splitlines()[-1]
        self.port = self.uri.rsplit(":", 1)[1]
        self.pid = int((state / "pid").read_text())
        argv = Path(f"/proc/{self.pid}/cmdline").read_bytes().split(b"\0")[:-1]
        self.argv = [a.decode() for a in argv]
        # The restart must come back on the same port, not on a new free one.
        self.argv[self.argv.index("--port") + 1] = self.port

    def stop(self) -> None:
        """SIGTERM, as a service manager stops it; returns once the process is gone."""
        os.kill(self.pid, signal.SIGTERM)
        if self.proc is not None:
            self.proc.wait(timeout=120)
            return
        deadline = time.monotonic() + 120
        while Path(f"/proc/{self.pid}").exists():
            assert time.monotonic() < deadline, "Neo4j did not stop"
            time.sleep(0.1)

    def start(self) -> None:
        with (self.state / "server.log").open("ab") as log:
            self.proc = subprocess.Popen(
                self.argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True
            )
        self.pid = self.proc.pid
        (self.state / "pid").write_text(str(self.pid))  # so that `down` stops this one

    def down(self) -> None:
        subprocess.run(["bash", str(LAUNCHER), "down"], env=self.env, timeout=180, check=False)
        if self.proc is not None:
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)


@pytest.fixture
def neo4j(tmp_path: Path) -> Iterator[PrivateNeo4j]:
    if (
        not (shutil.which("java") and shutil.which("mvn"))
        and not (ROOT / "tools" / "neo4j" / "target" / "sgam-embedded-neo4j.jar").exists()
    ):
        reason = "a private Neo4j needs java and mvn (tools/neo4j/neo4j.sh)"
        if os.environ.get("SGAM_REQUIRE_NEO4J") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    server = PrivateNeo4j(tmp_path / "neo4j")
    try:
        yield server
    finally:
        server.down()


def assert_unavailable(r: httpx.Response) -> None:
    assert r.status_code == 503, (r.request.url, r.status_code, r.text)
    assert int(r.headers["Retry-After"]) >= 1
    assert r.headers["content-type"].startswith("application/problem+json")


def test_neo4j_restart_gives_503_then_recovers_with_every_acknowledged_write(
    neo4j: PrivateNeo4j, tmp_path: Path, tenant: str
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = serve(neo4j.uri, port, log=tmp_path / "serve.log")
    load = Load(url, tenant)
    probes = 0
    try:
        wait_ready(server, url)
        load.start()
        load.wait_acknowledged(ACKNOWLEDGED_BEFORE_STOP)
        stopped = time.monotonic()
        neo4j.stop()
        acknowledged_at_stop = len(load.acknowledged)
        with httpx.Client(base_url=url, timeout=120) as c:
            for _ in range(DOWN_PROBES):
                assert_unavailable(c.get("/readyz"))
                assert_unavailable(c.get(f"/v1/tenants/{tenant}/facts", params={"subject": "w0"}))
                probes += 2
            down_seconds = time.monotonic() - stopped
            neo4j.start()
            # Nobody restarts sgam: it must find the new Neo4j on its own.
            deadline = time.monotonic() + START_SECONDS
            while (r := c.get("/readyz")).status_code != 200:
                assert_unavailable(r)
                assert server.proc.poll() is None, server.tail()
                assert time.monotonic() < deadline, "sgam did not recover"
                time.sleep(0.5)
        load.wait_acknowledged(acknowledged_at_stop + AFTER_RESTART, seconds=START_SECONDS)
        load.finish()
        found = found_batches(url, tenant)
    finally:
        load.stop.set()
        server.stop()
    whole = check_batches(load, found)
    timelines = neo4j_invariants(neo4j.uri, tenant)
    print(
        f"\nfaults: neo4j restart: batches attempted {len(load.attempted)}, acknowledged"
        f" {len(load.acknowledged)} ({acknowledged_at_stop} before the stop), found whole"
        f" {whole}, half-written 0; 503 + Retry-After: {load.retry_after_seen} writes and"
        f" {probes} probes while down (down for {down_seconds:.0f} s before the restart);"
        f" timelines checked {timelines}"
    )
    assert not load.errors, load.errors
    assert load.retry_after_seen > 0  # the writers too were told to come back later
    assert len(load.acknowledged) >= acknowledged_at_stop + AFTER_RESTART
