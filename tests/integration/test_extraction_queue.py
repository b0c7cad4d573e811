"""The durable queue on each store: atomic claims, leases, crash recovery, backoff, retry."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from extraction import LlmExtractor, on_episode_created, retry_episode, start_workers
from extraction.loopback import LoopbackLLM, Reply, answer, status
from extraction.worker import Worker
from graph.errors import ConflictError, NotFoundError
from graph.model import EpisodeCreate, EpisodeStatus, ExtractMode
from graph.queue import QueueStore
from graph.service import MemoryService
from graph.timeutil import utcnow
from tests.integration.test_extraction_pipeline import T0, fact, settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def model(llm: LoopbackLLM) -> Iterator[LlmExtractor]:
    ex = LlmExtractor(base_url=llm.base_url, model="loopback", timeout=10.0)
    yield ex
    ex.close()


def queued(service: MemoryService, tenant: str, eid: str, content: str = "x") -> None:
    ep, _ = service.add_episode(
        tenant_id=tenant,
        body=EpisodeCreate(episode_id=eid, content=content, occurred_at=T0),
        status=EpisodeStatus.PENDING,
    )
    assert ep.status == EpisodeStatus.PENDING


def claim(q: QueueStore, tenant: str, owner: str, lease: float = 30.0) -> str | None:
    now = utcnow()
    ep = q.claim(
        owner=owner,
        now=now,
        lease_until=now + timedelta(seconds=lease),
        max_attempts=3,
        tenant_id=tenant,
    )
    return None if ep is None else ep.episode_id


def test_concurrent_claims_hand_out_each_episode_exactly_once(
    service: MemoryService, tenant: str
) -> None:
    q = service.store.queue
    ids = [f"e{i}" for i in range(24)]
    for eid in ids:
        queued(service, tenant, eid)
    got: list[str] = []
    lock = threading.Lock()

    def drain(owner: str) -> None:
        while (eid := claim(q, tenant, owner)) is not None:
            with lock:
                got.append(eid)

    threads = [threading.Thread(target=drain, args=(f"w{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == sorted(ids)
    assert Counter(got).most_common(1)[0][1] == 1
    assert q.queue_counts(tenant_id=tenant) == {"processing": 24}


def test_only_the_lease_holder_records_the_outcome(service: MemoryService, tenant: str) -> None:
    q = service.store.queue
    queued(service, tenant, "e1")
    assert claim(q, tenant, "a", lease=1.0) == "e1"
    time.sleep(1.1)
    assert claim(q, tenant, "b") == "e1"  # a's lease expired: b takes over
    assert not q.complete(tenant_id=tenant, episode_id="e1", owner="a", rejected=[])
    assert not q.fail(tenant_id=tenant, episode_id="e1", owner="a", error="x", retry_at=None)
    assert not q.extend_lease(
        tenant_id=tenant, episode_id="e1", owner="a", lease_until=utcnow() + timedelta(seconds=9)
    )
    assert q.complete(tenant_id=tenant, episode_id="e1", owner="b", rejected=[])
    ep = service.get_episode(tenant_id=tenant, episode_id="e1")
    assert (ep.status, ep.attempts) == (EpisodeStatus.EXTRACTED, 2)


def test_stalled_worker_loses_the_episode_which_is_completed_once(
    service: MemoryService, tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    """A worker that claims and never completes (hung, or its thread died)."""
    q = service.store.queue
    queued(service, tenant, "e1", "my passport deadline is 2026-07-15")
    assert claim(q, tenant, "stalled", lease=2.0) == "e1"
    llm.script(answer([fact()]))
    worker = Worker(service, model, settings(), tenant_id=tenant)
    assert worker.run_once() is None  # the lease still holds
    time.sleep(2.1)
    report = worker.run_once()
    assert report is not None
    assert (report.status, report.attempts) == ("extracted", 2)
    assert worker.run_once() is None  # nothing left: completed exactly once
    ep = service.get_episode(tenant_id=tenant, episode_id="e1")
    assert (ep.status, ep.attempts, ep.last_error) == (EpisodeStatus.EXTRACTED, 2, None)
    history = service.history(tenant_id=tenant, subject="mira", predicate="passport_deadline")
    assert [(f.value, f.source_episode_id) for f in history] == [("2026-07-15", "e1")]
    assert llm.calls == 1


WORKER_SCRIPT = """
import sys
from extraction import ExtractionSettings, run_worker
s = ExtractionSettings(llm_base_url=sys.argv[2], llm_model="loopback",
                       worker_lease_seconds=1.0, worker_poll_seconds=0.05)
sys.exit(run_worker(s, store_url=sys.argv[1], count=1))
"""


def test_worker_process_killed_mid_episode_is_completed_by_another_exactly_once(
    service: MemoryService, tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    """A real ``sgam worker`` process, SIGKILLed while it holds the lease."""
    q = service.store.queue
    # The killed worker's call hangs; the answer the survivor gets writes the fact.
    llm.script(Reply(delay=60.0, body=b"{}"), answer([fact()]))
    queued(service, tenant, "e1", "my passport deadline is 2026-07-15")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER_SCRIPT, service.store.url, llm.base_url],
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while llm.calls == 0 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert llm.calls == 1, "the worker process never called the model"
        held = service.get_episode(tenant_id=tenant, episode_id="e1")
        assert (held.status, held.attempts) == (EpisodeStatus.PROCESSING, 1)
        time.sleep(1.2)  # the process is renewing its lease: it must still hold it
        assert claim(q, tenant, "thief") is None
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    worker = Worker(service, model, settings(), tenant_id=tenant)
    deadline = time.monotonic() + 10
    report = None
    while report is None and time.monotonic() < deadline:
        report = worker.run_once()  # due once the dead process's lease (1 s) runs out
        time.sleep(0.1)
    assert report is not None
    assert (report.status, report.attempts) == ("extracted", 2)
    ep = service.get_episode(tenant_id=tenant, episode_id="e1")
    assert (ep.status, ep.attempts) == (EpisodeStatus.EXTRACTED, 2)
    history = service.history(tenant_id=tenant, subject="mira", predicate="passport_deadline")
    assert [(f.value, f.source_episode_id) for f in history] == [("2026-07-15", "e1")]
    assert llm.calls == 2
    assert worker.run_once() is None


def test_an_episode_whose_workers_keep_dying_ends_failed_not_looping(
    service: MemoryService, tenant: str
) -> None:
    q = service.store.queue
    queued(service, tenant, "e1")
    for i in range(3):  # max_attempts = 3 in claim()
        assert claim(q, tenant, f"dies-{i}", lease=0.05) == "e1"
        time.sleep(0.1)
    assert claim(q, tenant, "next") is None
    ep = service.get_episode(tenant_id=tenant, episode_id="e1")
    assert ep.status == EpisodeStatus.FAILED
    assert ep.last_error == (
        "abandoned: the worker lease expired on attempt 3 of 3 (the worker crashed or stalled)"
    )


def test_transient_failures_back_off_then_fail_after_max_attempts(
    service: MemoryService, tenant: str, llm: LoopbackLLM
) -> None:
    ex = LlmExtractor(base_url=llm.base_url, model="m", max_retries=0)
    llm.script(*[status(503)] * 3)
    queued(service, tenant, "e1")
    worker = Worker(service, ex, settings(worker_max_attempts=3), tenant_id=tenant)
    statuses = []
    for _ in range(3):
        report = worker.run_once()
        assert report is not None
        statuses.append((report.status, report.attempts))
    ex.close()
    assert statuses == [("pending", 1), ("pending", 2), ("failed", 3)]
    ep = service.get_episode(tenant_id=tenant, episode_id="e1")
    assert ep.status == EpisodeStatus.FAILED
    assert ep.last_error is not None
    assert ep.last_error.startswith("HTTP 503")
    assert llm.calls == 3


def test_retry_is_refused_while_queued_and_unknown_episodes_are_404(
    service: MemoryService, tenant: str
) -> None:
    queued(service, tenant, "e1")
    with pytest.raises(ConflictError, match="is pending"):
        retry_episode(service, tenant_id=tenant, episode_id="e1")
    with pytest.raises(NotFoundError):
        retry_episode(service, tenant_id=tenant, episode_id="nope")


def test_background_episodes_land_within_seconds(
    service: MemoryService, tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    pool = start_workers(
        service, model, settings(worker_poll_seconds=1.0), count=2, tenant_id=tenant
    )
    try:
        started = time.monotonic()
        for i in range(6):
            ep, _ = service.add_episode(
                tenant_id=tenant,
                body=EpisodeCreate(
                    episode_id=f"e{i}", content=f"Pet{i}'s name is cat{i}", occurred_at=T0
                ),
                status=EpisodeStatus.PENDING,
            )
            on_episode_created(service, model, ep, ExtractMode.BACKGROUND)
        deadline = started + 10
        while time.monotonic() < deadline:
            if service.store.queue.queue_counts(tenant_id=tenant) == {"extracted": 6}:
                break
            time.sleep(0.02)
    finally:
        pool.stop()
    assert service.store.queue.queue_counts(tenant_id=tenant) == {"extracted": 6}
    got = sorted((f.subject, f.predicate, f.value) for f in service.facts(tenant_id=tenant))
    assert got == [(f"pet{i}", "name", f"cat{i}") for i in range(6)]
    assert llm.calls == 6  # one model call per episode
    assert pool.processed == 6


def test_a_worker_that_lost_its_lease_writes_no_facts(
    service: MemoryService, tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    """Review M8: the lease is checked inside the transaction that writes the facts, not
    only when the outcome is recorded."""
    from extraction.pipeline import run_claimed

    q = service.store.queue
    queued(service, tenant, "e1", "my passport deadline is 2026-07-15")
    now = utcnow()
    slow = q.claim(
        owner="a", now=now, lease_until=now + timedelta(seconds=1), max_attempts=3, tenant_id=tenant
    )
    assert slow is not None
    time.sleep(1.1)
    assert claim(q, tenant, "b") == "e1"  # a's lease ran out: b has the episode now
    llm.script(answer([fact()]))
    report = run_claimed(service, q, model, slow, owner="a", settings=settings(), may_retry=True)
    assert report.lease_lost
    assert report.facts == []
    assert service.history(tenant_id=tenant, subject="mira", predicate="passport_deadline") == []
    ep = service.get_episode(tenant_id=tenant, episode_id="e1")
    assert ep.status == EpisodeStatus.PROCESSING  # b's claim, untouched by a
    assert q.complete(tenant_id=tenant, episode_id="e1", owner="b", rejected=[])
