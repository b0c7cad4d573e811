"""What the fault tests share: real `sgam` processes on loopback, a write load whose every
batch can be recognised afterwards, and the ledger's invariants read from the store itself.

Every figure a test measures (writes attempted, acknowledged, found) is printed on one
line starting with ``faults:``; tests/faults/README.md keeps the figures of a run.
"""

from __future__ import annotations

import itertools
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from graph.timeutil import from_db

ROOT = Path(__file__).resolve().parents[2]
BASE = datetime(2026, 1, 1, tzinfo=UTC)
# Facts of one batch on subjects of their own (found or not, one by one), beside a version
# on the writer's own timeline and one on a timeline every writer shares.
COUNT_FACTS = 4
EPISODE = "load"  # every fact cites it


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def process_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    env["TRANSFORMERS_OFFLINE"] = "1"
    env.update(extra)
    return env


class Sgam:
    """One `sgam serve` (or `sgam worker`) subprocess, in its own process group."""

    def __init__(self, args: list[str], *, log: Path, env: Mapping[str, str]) -> None:
        self.log = log
        with log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "api.cli", *args],
                cwd=ROOT,
                env=dict(env),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def kill9(self) -> None:
        """SIGKILL: no handler, no cleanup, no flush; as a crash or the OOM killer."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


def serve(store_url: str, port: int, *, log: Path, workers: int = 0, **env: str) -> Sgam:
    args = ["serve", "--host", "127.0.0.1", "--port", str(port), "--store", store_url]
    args += ["--workers", str(workers)]
    return Sgam(args, log=log, env=process_env(SGAM_LOG_LEVEL="warning", **env))


def wait_ready(server: Sgam, url: str, *, seconds: float = 120.0) -> None:
    """Until /readyz answers 200 (imports and the store's init take a while when loaded)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert server.proc.poll() is None, f"sgam exited:\n{server.tail()}"
        try:
            if httpx.get(f"{url}/readyz", timeout=10).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise AssertionError(f"sgam did not become ready in {seconds:.0f} s:\n{server.tail()}")


# -- the write load --------------------------------------------------------------------
def batch(writer: int, k: int) -> list[dict[str, Any]]:
    """Batch k of writer w: its facts are recognisable by subject and value alone."""
    at = (BASE + timedelta(minutes=k, seconds=writer)).isoformat()
    cite = {"source_episode_id": EPISODE, "valid_from": at}
    facts: list[dict[str, Any]] = [
        {"subject": f"w{writer}-b{k}-{i}", "predicate": "count", "value": k * 10 + i, **cite}
        for i in range(COUNT_FACTS)
    ]
    facts.append({"subject": f"w{writer}", "predicate": "level", "value": k, **cite})
    facts.append({"subject": "shared", "predicate": "level", "value": f"w{writer}-{k}", **cite})
    return facts


@dataclass
class Load:
    """Writer threads posting batches; each batch is acknowledged (2xx), refused (an
    answer that is not 2xx) or in doubt (no answer: the connection broke)."""

    url: str
    tenant: str
    writers: int = 3
    attempted: list[tuple[int, int]] = field(default_factory=list)
    acknowledged: list[tuple[int, int]] = field(default_factory=list)
    in_doubt: list[tuple[int, int]] = field(default_factory=list)
    answers: dict[int, int] = field(default_factory=dict)  # status code -> count
    errors: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    retry_after_seen: int = 0
    unsent: int = 0  # connections refused (no server): nothing was sent
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> Load:
        episode = {"episode_id": EPISODE, "content": "load", "occurred_at": BASE.isoformat()}
        r = httpx.post(f"{self.url}/v1/tenants/{self.tenant}/episodes", json=episode, timeout=60)
        assert r.status_code in (200, 201), r.text
        for w in range(self.writers):
            t = threading.Thread(target=self._run, args=(w,), daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def finish(self) -> None:
        self.stop.set()
        for t in self._threads:
            t.join(timeout=120)
        assert not any(t.is_alive() for t in self._threads), "a writer is stuck"

    def wait_acknowledged(self, n: int, *, seconds: float = 120.0) -> None:
        deadline = time.monotonic() + seconds
        while len(self.acknowledged) < n:
            assert time.monotonic() < deadline, f"only {len(self.acknowledged)} writes acknowledged"
            assert not self.errors, self.errors
            time.sleep(0.05)

    def _run(self, w: int) -> None:
        path = f"/v1/tenants/{self.tenant}/facts"
        k = 0
        with httpx.Client(base_url=self.url, timeout=60) as client:
            while not self.stop.is_set():
                try:
                    r = client.post(path, json={"facts": batch(w, k)})
                except httpx.ConnectError:  # nothing sent: no server listens; same batch again
                    with self._lock:
                        self.unsent += 1
                    time.sleep(0.2)
                    continue
                except httpx.HTTPError:  # sent, but no answer: it may or may not be written
                    with self._lock:
                        self.attempted.append((w, k))
                        self.in_doubt.append((w, k))
                    k += 1
                    time.sleep(0.2)
                    continue
                with self._lock:
                    self.attempted.append((w, k))
                    self.answers[r.status_code] = self.answers.get(r.status_code, 0) + 1
                    if r.status_code in (200, 201):
                        self.acknowledged.append((w, k))
                    elif r.status_code == 503 and int(r.headers.get("Retry-After", "0")) >= 1:
                        self.retry_after_seen += 1
                    else:
                        self.errors.append(f"{r.status_code} {r.text[:300]}")
                k += 1
                if r.status_code not in (200, 201):
                    time.sleep(0.2)


# -- what is there afterwards ----------------------------------------------------------
def _pages(client: httpx.Client, path: str, params: dict[str, Any], key: str) -> Iterator[Any]:
    cursor: str | None = None
    while True:
        q = {**params, **({"cursor": cursor} if cursor else {})}
        r = client.get(path, params=q, timeout=60)
        assert r.status_code == 200, r.text
        body = r.json()
        yield from body[key]
        cursor = body.get("next_cursor")
        if not cursor:
            return


def found_batches(url: str, tenant: str) -> dict[tuple[int, int], int]:
    """(writer, k) -> how many of that batch's facts the API returns."""
    seen: dict[tuple[int, int], int] = {}

    def add(w: int, k: int) -> None:
        seen[(w, k)] = seen.get((w, k), 0) + 1

    base = f"/v1/tenants/{tenant}/facts"
    with httpx.Client(base_url=url) as c:
        for f in _pages(c, base, {"predicate": "count", "limit": 1000}, "facts"):
            w, b, _ = f["subject"].split("-")
            add(int(w[1:]), int(b[1:]))
        writers = set()
        for f in _pages(c, f"{base}/history", {"subject": "shared", "predicate": "level"}, "facts"):
            w, k = f["value"].split("-")
            writers.add(int(w[1:]))
            add(int(w[1:]), int(k))
        for w in sorted(writers | {w for w, _ in seen}):
            for f in _pages(
                c, f"{base}/history", {"subject": f"w{w}", "predicate": "level"}, "facts"
            ):
                add(w, int(f["value"]))
    return seen


BATCH_SIZE = COUNT_FACTS + 2


def check_batches(load: Load, found: dict[tuple[int, int], int]) -> int:
    """Every acknowledged batch whole, every other batch whole or absent; the number of
    batches found (whole)."""
    half = {b: n for b, n in found.items() if n != BATCH_SIZE}
    assert not half, f"half-written batches (batch: facts found of {BATCH_SIZE}): {half}"
    missing = sorted(set(load.acknowledged) - set(found))
    assert not missing, f"acknowledged batches lost: {missing}"
    unknown = sorted(set(found) - set(load.attempted))
    assert not unknown, f"batches found that nobody wrote: {unknown}"
    return len(found)


# -- the ledger's invariants, read from the store itself --------------------------------
def check_timelines(spans: dict[str, list[tuple[datetime, datetime | None]]]) -> int:
    """No two current versions of a timeline overlap; at most one is open. The count of
    timelines checked."""
    for key, versions in spans.items():
        versions.sort(key=lambda s: s[0])
        assert sum(1 for _, end in versions if end is None) <= 1, f"two open versions: {key}"
        for (_, end), (start, _) in itertools.pairwise(versions):
            assert end is not None, f"an open version before another on {key}: {versions}"
            assert end <= start, f"overlapping versions on {key}: {versions}"
    return len(spans)


def sqlite_invariants(path: Path, tenant: str) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT timeline_key, valid_from, valid_to FROM facts"
            " WHERE tenant_id = ? AND retired_at IS NULL",
            (tenant,),
        ).fetchall()
    finally:
        db.close()
    spans: dict[str, list[tuple[datetime, datetime | None]]] = {}
    for key, start, end in rows:
        spans.setdefault(key, []).append((from_db(start), from_db(end) if end else None))
    return check_timelines(spans)


def neo4j_invariants(uri: str, tenant: str) -> int:
    from neo4j import GraphDatabase

    with GraphDatabase.driver(uri, auth=None) as d:
        records, _, _ = d.execute_query(
            "MATCH ()-[r:FACT {tenant_id: $t}]->() WHERE r.retired_at IS NULL"
            " RETURN r.timeline_key AS k, r.valid_from AS f, r.valid_to AS t",
            {"t": tenant},
        )
    spans: dict[str, list[tuple[Any, Any]]] = {}
    for r in records:
        spans.setdefault(r["k"], []).append((r["f"], r["t"]))
    return check_timelines(spans)


def purge_neo4j(uri: str, tenant: str) -> None:
    from graph.stores.neo4j.store import Neo4jStore

    store = Neo4jStore.from_url(uri)
    try:
        store.purge_tenant(tenant_id=tenant)
    finally:
        store.close()
