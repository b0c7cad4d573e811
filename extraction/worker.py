"""Queue workers: claim an episode with a lease, extract it, record the outcome.

Workers run as threads inside ``sgam serve`` (:func:`start_workers`) and as separate
``sgam worker`` processes (:func:`run_worker`) against the same store; the store's atomic
claim decides who gets each episode. A worker that dies holding a lease loses the episode
to the next worker once the lease expires; the ledger makes its partial writes, if any,
no-ops on the second run, so facts are written once.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
import uuid
from datetime import timedelta
from types import FrameType

from extraction.models import ExtractionReport, Extractor
from extraction.pipeline import register_wakeup, run_claimed, unregister_wakeup
from extraction.settings import ExtractionSettings
from graph.errors import SgamError
from graph.model import EpisodeStatus
from graph.service import MemoryService
from graph.timeutil import utcnow

log = logging.getLogger("sgam.extraction")


def worker_id() -> str:
    """Unique per worker, and says where it runs (shown as lease_owner while it works)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def serves(extractor: Extractor | None, tenant_id: str | None, count: int) -> str:
    """What workers will claim, said once at start (a worker without a model leaves
    episodes that need one to a worker that has one)."""
    who = f"tenant {tenant_id}" if tenant_id else "every tenant"
    if extractor is not None:
        what = f"every queued episode, extracted by {extractor.name} or an event mapping"
    else:
        what = (
            "only episodes an event mapping of the schema extracts (no model configured:"
            " SGAM_LLM_BASE_URL, SGAM_LLM_MODEL); episodes that need a model are left to"
            " workers that have one"
        )
    return f"sgam: {count} extraction worker(s) for {who}: {what}"


class Worker:
    def __init__(
        self,
        service: MemoryService,
        extractor: Extractor | None,
        settings: ExtractionSettings,
        *,
        owner: str | None = None,
        tenant_id: str | None = None,
    ) -> None:
        self.service = service
        self.tenant_id = tenant_id  # serve one tenant only (None: every tenant)
        self.queue = service.store.queue
        self.extractor = extractor
        self.settings = settings
        self.owner = owner or worker_id()
        self.processed = 0
        self.failed = 0

    def run_once(self) -> ExtractionReport | None:
        """Claim and process one due episode; None when nothing is due."""
        now = utcnow()
        episode = self.queue.claim(
            owner=self.owner,
            now=now,
            lease_until=now + timedelta(seconds=self.settings.worker_lease_seconds),
            max_attempts=self.settings.worker_max_attempts,
            tenant_id=self.tenant_id,
            with_model=self.extractor is not None,  # only what this worker can do
        )
        if episode is None:
            return None
        report = run_claimed(
            self.service,
            self.queue,
            self.extractor,
            episode,
            owner=self.owner,
            settings=self.settings,
            may_retry=True,
        )
        self.processed += 1
        if report.status != EpisodeStatus.EXTRACTED:
            self.failed += 1
        return report

    def run(self, stop: threading.Event, wake: threading.Event | None = None) -> None:
        """Work until ``stop`` is set; between episodes, idle until woken or polled."""
        wake = wake or threading.Event()
        pause = self.settings.worker_poll_seconds
        while not stop.is_set():
            try:
                report = self.run_once()
            except SgamError as e:  # the store is down: wait, then try again
                log.warning("worker %s cannot reach the queue: %s", self.owner, e)
                stop.wait(min(30.0, pause * 10))
                continue
            if report is None:
                wake.wait(pause)
                wake.clear()


class WorkerPool:
    """``count`` worker threads sharing one service; woken when an episode is queued."""

    def __init__(
        self,
        service: MemoryService,
        extractor: Extractor | None,
        settings: ExtractionSettings,
        *,
        count: int,
        tenant_id: str | None = None,
    ) -> None:
        self.workers = [
            Worker(service, extractor, settings, tenant_id=tenant_id) for _ in range(count)
        ]
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> WorkerPool:
        if self.workers:
            # On stderr, not only in a logger nobody configured: an operator must see
            # which episodes this process leaves to others.
            first = self.workers[0]
            print(serves(first.extractor, first.tenant_id, len(self.workers)), file=sys.stderr)
        register_wakeup(self._wake.set)
        for w in self.workers:
            t = threading.Thread(
                target=w.run,
                args=(self._stop, self._wake),
                name=f"sgam-worker-{w.owner}",
                daemon=True,
            )
            t.start()
            self._threads.append(t)
        return self

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the episodes in hand (their leases cover a worker killed meanwhile)."""
        unregister_wakeup(self._wake.set)
        self._stop.set()
        self._wake.set()
        for t in self._threads:
            t.join(timeout)

    @property
    def processed(self) -> int:
        return sum(w.processed for w in self.workers)


def start_workers(
    service: MemoryService,
    extractor: Extractor | None,
    settings: ExtractionSettings,
    *,
    count: int | None = None,
    tenant_id: str | None = None,
) -> WorkerPool:
    """Start worker threads (``settings.workers`` unless ``count``); stop the pool on exit."""
    n = settings.workers if count is None else count
    return WorkerPool(service, extractor, settings, count=n, tenant_id=tenant_id).start()


def run_worker(
    settings: ExtractionSettings,
    *,
    store_url: str | None = None,
    count: int | None = None,
    stop: threading.Event | None = None,
) -> int:
    """The ``sgam worker`` process: work until SIGTERM or SIGINT; the exit status."""
    from extraction.llm import build_extractor
    from graph.retrieval import SearchableStore
    from graph.retrieval.indexer import start_indexer
    from graph.stores import open_store

    try:
        store = open_store(store_url)
    except SgamError as e:
        # One line, not a traceback: a wrong URL or database is a setting to fix.
        print(f"sgam worker: cannot open the store: {e}", file=sys.stderr)
        return 2
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():

        def _stop(signum: int, frame: FrameType | None) -> None:
            log.info("signal %d: finishing the episodes in hand", signum)
            stop.set()

        signal.signal(signal.SIGTERM, _stop)
        signal.signal(signal.SIGINT, _stop)
    extractor = build_extractor(settings)
    n = max(1, settings.workers if count is None else count)
    pool = start_workers(MemoryService(store), extractor, settings, count=n)
    # The indexer embeds new items of every tenant, beside the extraction workers.
    indexer = start_indexer(store) if isinstance(store, SearchableStore) else None
    log.info(
        "sgam worker: %d worker(s)%s on %s", n, " and the indexer" if indexer else "", store.url
    )
    try:
        stop.wait()
    finally:
        if indexer is not None:
            indexer.stop()
        pool.stop()
        if extractor is not None:
            extractor.close()
        store.close()
    return 0
