"""A Neo4j that stops and comes back: sgam answers 503 with Retry-After meanwhile (never
500) and recovers by itself, and every write it acknowledged is there afterwards.

A private Neo4j (its own launcher state dir, so the shared test server is untouched) is
stopped with SIGTERM and started again with the very same command line: same JVM, same
data dir, same port. sgam runs on real HTTP on loopback against it, under a small write
load from two threads.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.server import running
from api.settings import Settings
from graph.stores.neo4j.store import Neo4jStore

pytestmark = pytest.mark.neo4j

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = ROOT / "tools" / "neo4j" / "neo4j.sh"
TENANT = "faults"
LOAD_SECONDS = 4.0
DOWN_SECONDS = 3.0
RECOVER_SECONDS = 60.0
# A request while Neo4j is down waits through the driver's retries (5 s) before its 503;
# generous, because the point is the answer, not its time.
PROBE_TIMEOUT = 60.0


class PrivateNeo4j:
    def __init__(self, state: Path) -> None:
        self.env = {
            **os.environ,
            "SGAM_NEO4J_STATE_DIR": str(state),
            "SGAM_NEO4J_START_TIMEOUT": os.environ.get("SGAM_NEO4J_START_TIMEOUT", "400"),
        }
        self.state = state
        out = subprocess.run(
            ["bash", str(LAUNCHER), "up"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=500,
            check=False,
        )
        assert out.returncode == 0, f"private Neo4j did not start: {out.stderr[-2000:]}"
        self.uri = out.stdout.strip().splitlines()[-1]
        self.port = self.uri.rsplit(":", 1)[1]
        pid = int((state / "pid").read_text())
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
        self.argv = [a.decode() for a in argv]
        # The restart must come back on the same port, not on a new free one.
        self.argv[self.argv.index("--port") + 1] = self.port
        self.pid = pid
        self.proc: subprocess.Popen[bytes] | None = None

    def stop(self) -> None:
        os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while Path(f"/proc/{self.pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.1)

    def start(self) -> None:
        log = (self.state / "server.log").open("ab")
        proc = subprocess.Popen(
            self.argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True
        )
        self.proc = proc
        self.pid = proc.pid
        (self.state / "pid").write_text(str(proc.pid))  # so that `down` stops this one

    def down(self) -> None:
        subprocess.run(["bash", str(LAUNCHER), "down"], env=self.env, timeout=120, check=False)
        if self.proc is not None:
            self.proc.wait(timeout=60)


@pytest.fixture
def neo4j(tmp_path: Path) -> Iterator[PrivateNeo4j]:
    server = PrivateNeo4j(tmp_path / "neo4j")
    try:
        yield server
    finally:
        server.down()


def write(client: httpx.Client, n: int, who: str) -> bool:
    fact = {"subject": f"{who}-{n}", "predicate": "count", "value": n, "source_episode_id": "e1"}
    body = {"facts": [fact]}
    try:
        r = client.post(f"/v1/tenants/{TENANT}/facts", json=body, timeout=15)
    except httpx.HTTPError:
        return False
    assert r.status_code != 500, r.text
    if r.status_code == 503:
        assert int(r.headers["Retry-After"]) >= 1
    return r.status_code in (200, 201)


def test_neo4j_restart_gives_503_then_recovers_with_every_acknowledged_write(
    neo4j: PrivateNeo4j,
) -> None:
    store = Neo4jStore.from_url(neo4j.uri)
    store.init()
    # No extraction workers: this test is about the API's answers.
    settings = Settings(host="127.0.0.1", port=0, log_level="warning", workers=0)
    attempted: list[str] = []
    acknowledged: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def load(who: str, url: str) -> None:
        n = 0
        with httpx.Client(base_url=url) as client:
            while not stop.is_set():
                n += 1
                with lock:
                    attempted.append(f"{who}-{n}")
                if write(client, n, who):
                    with lock:
                        acknowledged.append(f"{who}-{n}")
                else:
                    time.sleep(0.2)

    try:
        with running(settings, store=store) as url, httpx.Client(base_url=url) as c:
            episode = {"episode_id": "e1", "content": "load", "occurred_at": "2026-01-01T00:00:00Z"}
            assert c.post(
                f"/v1/tenants/{TENANT}/episodes", json=episode, timeout=PROBE_TIMEOUT
            ).status_code in (200, 201)
            threads = [threading.Thread(target=load, args=(w, url)) for w in ("a", "b")]
            for t in threads:
                t.start()
            time.sleep(LOAD_SECONDS)
            neo4j.stop()
            down_until = time.monotonic() + DOWN_SECONDS
            seen_503 = 0
            while time.monotonic() < down_until:
                for path in ("/readyz", f"/v1/tenants/{TENANT}/facts?subject=a-1"):
                    r = c.get(path, timeout=PROBE_TIMEOUT)
                    assert r.status_code == 503, (path, r.status_code, r.text)
                    assert int(r.headers["Retry-After"]) >= 1
                    seen_503 += 1
            neo4j.start()
            deadline = time.monotonic() + RECOVER_SECONDS
            while c.get("/readyz", timeout=15).status_code != 200:
                assert time.monotonic() < deadline, "sgam did not recover"
                time.sleep(0.5)
            time.sleep(2)  # the load writes again
            stop.set()
            for t in threads:
                t.join(timeout=30)
            found = set()
            for who in acknowledged:
                r = c.get(f"/v1/tenants/{TENANT}/facts", params={"subject": who}, timeout=15)
                assert r.status_code == 200, r.text
                if r.json()["facts"]:
                    found.add(who)
            print(
                f"\nneo4j restart: writes attempted {len(attempted)}, acknowledged"
                f" {len(acknowledged)}, found {len(found)}; 503 answers while down {seen_503}"
            )
            assert seen_503 > 0
            assert found == set(acknowledged)
            assert_invariants(neo4j.uri)
    finally:
        stop.set()
        store.close()


def assert_invariants(uri: str) -> None:
    """No overlapping intervals and at most one open version per timeline."""
    from neo4j import GraphDatabase

    with GraphDatabase.driver(uri, auth=None) as d:
        rows: Any
        rows, _, _ = d.execute_query(
            "MATCH ()-[r:FACT {tenant_id: $t}]->() WHERE r.retired_at IS NULL"
            " RETURN r.timeline_key AS k, r.valid_from AS f, r.valid_to AS t ORDER BY k, f",
            {"t": TENANT},
        )
    by_key: dict[str, list[tuple[Any, Any]]] = {}
    for r in rows:
        by_key.setdefault(r["k"], []).append((r["f"], r["t"]))
    for key, spans in by_key.items():
        assert sum(1 for _, t in spans if t is None) <= 1, key
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end is not None, key
            assert end <= start, key
