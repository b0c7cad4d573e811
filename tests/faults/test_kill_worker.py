"""A `sgam worker` process killed with SIGKILL in the middle of an episode.

Two real `sgam worker` processes share one SQLite store and a slow model (the loopback
chat-completions server, each answer delayed). Once worker A holds an episode and its
model call is in flight, A is killed. Worker B carries on with the queue and, when A's
lease runs out, claims A's episode too. Afterwards every episode is extracted exactly
once: each has status extracted, each statement is one fact version (nothing doubled),
and the model was asked once per episode plus once for the call the kill cut short.

SQLite only: a worker serves every tenant of its store, so on the shared test Neo4j it
would take other tests' queued episodes.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from extraction.loopback import LoopbackLLM, Reply, rule_responder
from graph.model import EpisodeCreate, EpisodeStatus
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore
from tests.faults.support import BASE, Sgam, process_env

EPISODES = 6
STATEMENTS = 2  # per episode
MODEL_DELAY = 1.5  # seconds per model answer: the kill lands while one is awaited
LEASE = 2.0  # seconds; a dead worker's episode is free again within this


def slow(request: dict[str, Any]) -> Reply:
    return dataclasses.replace(rule_responder(request), delay=MODEL_DELAY)


@pytest.fixture
def slow_llm() -> Iterator[LoopbackLLM]:
    with LoopbackLLM(slow) as server:
        yield server


def worker(db: Path, llm: LoopbackLLM, log: Path) -> Sgam:
    env = process_env(
        SGAM_LLM_BASE_URL=llm.base_url,
        SGAM_LLM_MODEL="loopback",
        SGAM_WORKER_LEASE_SECONDS=str(LEASE),
        SGAM_WORKER_POLL_SECONDS="0.1",
        SGAM_WORKER_BACKOFF_SECONDS="0",
    )
    return Sgam(["worker", "--store", f"sqlite:///{db}", "--workers", "1"], log=log, env=env)


def test_worker_killed_mid_episode_every_episode_extracted_once(
    tmp_path: Path, slow_llm: LoopbackLLM, tenant: str
) -> None:
    db = tmp_path / "sgam.db"
    store = SqliteStore(db)
    store.init()
    service = MemoryService(store)
    ids = [f"e{i}" for i in range(EPISODES)]
    for i, eid in enumerate(ids):
        content = f"Cust{i}'s tier is gold{i}. Cust{i}'s city is town{i}."
        body = EpisodeCreate(episode_id=eid, content=content, occurred_at=BASE)
        service.add_episode(tenant_id=tenant, body=body, status=EpisodeStatus.PENDING)
    a = worker(db, slow_llm, tmp_path / "worker-a.log")
    b = None
    try:
        # A's owner id carries its pid: wait until A holds an episode and asked the model.
        mark = f":{a.proc.pid}:"
        deadline = time.monotonic() + 120
        held = None
        while held is None:
            assert a.proc.poll() is None, a.tail()
            assert time.monotonic() < deadline, f"worker A never took an episode:\n{a.tail()}"
            time.sleep(0.05)
            if slow_llm.calls == 0:
                continue
            rows = store.conn.read(
                "SELECT episode_id FROM episodes WHERE tenant_id = ? AND status = 'processing'"
                " AND instr(lease_owner, ?) > 0",
                (tenant, mark),
            )
            held = rows[0]["episode_id"] if rows else None
        a.kill9()
        calls_at_kill = slow_llm.calls
        b = worker(db, slow_llm, tmp_path / "worker-b.log")
        deadline = time.monotonic() + 180
        while True:
            assert b.proc.poll() is None, b.tail()
            eps = [service.get_episode(tenant_id=tenant, episode_id=e) for e in ids]
            if all(e.status == EpisodeStatus.EXTRACTED for e in eps):
                break
            bad = [(e.episode_id, e.status, e.last_error) for e in eps if e.status == "failed"]
            assert not bad, bad
            assert time.monotonic() < deadline, [(e.episode_id, e.status) for e in eps]
            time.sleep(0.2)
    finally:
        a.stop()
        if b is not None:
            b.stop()
    facts = {e: service.episode_facts(tenant_id=tenant, episode_id=e) for e in ids}
    versions = 0
    for i in range(EPISODES):
        for predicate, value in (("tier", f"gold{i}"), ("city", f"town{i}")):
            history = service.history(tenant_id=tenant, subject=f"cust{i}", predicate=predicate)
            assert [(f.value, f.source_episode_id) for f in history] == [(value, f"e{i}")]
            versions += len(history)
    by_held = service.get_episode(tenant_id=tenant, episode_id=held)
    store.close()
    print(
        f"\nfaults: kill -9 worker: episodes {EPISODES}, extracted {len(eps)}, killed holding"
        f" {held} (attempts {by_held.attempts}), fact versions {versions} of"
        f" {EPISODES * STATEMENTS} expected, model calls {slow_llm.calls}"
        f" ({calls_at_kill} before the kill)"
    )
    assert all(len(f) == STATEMENTS for f in facts.values()), facts
    assert versions == EPISODES * STATEMENTS
    assert by_held.attempts == 2  # A's attempt, cut short, then B's
    # One call per episode, plus the one the kill cut short.
    assert slow_llm.calls == EPISODES + 1
