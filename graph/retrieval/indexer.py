"""The indexer: embeds new facts, episodes and entities after their writes commit, off the
request path, so that a search never embeds more than its own query.

Each round lists what waits for a vector (``store.search.pending``), then gives every
tenant with pending items at most one batch, starting after the tenant served first in
the previous round: a tenant's backlog delays another tenant by at most one batch. Until
an item is embedded it is found by fulltext and graph expansion only.

It runs as a daemon thread in the server (beside the extraction workers) and in
``sgam worker``; several processes may index the same store (a vector is stored once).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import datetime

from graph.embeddings import Embedder, EmbeddingUnavailableError, default_embedder
from graph.retrieval.port import ItemKind, Pending, SearchableStore, SearchPort
from graph.timeutil import utcnow

log = logging.getLogger(__name__)

DEFAULT_BATCH = 64  # items embedded per tenant per round: the fairness bound
DEFAULT_INTERVAL = 1.0  # seconds between rounds when nothing waits


@dataclass(frozen=True)
class KindLag:
    """Items of one kind waiting for a vector, over all tenants, and the oldest one's age."""

    pending: int
    oldest_seconds: float


def index_lag(search: SearchPort, model: str, *, now: datetime | None = None) -> dict[str, KindLag]:
    """Index lag per kind (every kind listed, zero when none waits). No tenant ids: these
    figures go to /metrics and /readyz."""
    at = now or utcnow()
    count = {k.value: 0 for k in ItemKind}
    oldest: dict[str, datetime] = {}
    for p in search.pending(model=model):
        k = p.kind.value
        count[k] += p.count
        if p.oldest is not None and (k not in oldest or p.oldest < oldest[k]):
            oldest[k] = p.oldest
    return {
        k: KindLag(
            pending=n,
            oldest_seconds=max(0.0, (at - oldest[k]).total_seconds()) if k in oldest else 0.0,
        )
        for k, n in count.items()
    }


def round_robin(tenants: list[str], after: str | None) -> list[str]:
    """``tenants`` (sorted) rotated to start after ``after``, the previous round's first."""
    if after is None:
        return tenants
    later = [t for t in tenants if t > after]
    return later + [t for t in tenants if t <= after]


class Indexer:
    """Embeds pending items of every tenant, round-robin, in bounded batches."""

    def __init__(
        self,
        store: SearchableStore,
        *,
        embedder: Embedder | None = None,
        batch: int = DEFAULT_BATCH,
        interval: float = DEFAULT_INTERVAL,
    ) -> None:
        if batch < 1:
            raise ValueError("batch must be at least 1")
        self.search = store.search
        self.embedder: Embedder = embedder or default_embedder()
        self.batch = batch
        self.interval = interval
        self._last_first: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.embedded = 0

    def pending_tenants(self) -> list[str]:
        """Tenants with items waiting, in this round's order."""
        waiting = self.search.pending(model=self.embedder.name)
        return round_robin(sorted({p.tenant_id for p in waiting if p.count}), self._last_first)

    def run_once(self) -> int:
        """One round: at most one batch per tenant with pending items; how many embedded."""
        tenants = self.pending_tenants()
        if not tenants:
            return 0
        self._last_first = tenants[0]
        done = 0
        for tenant in tenants:
            done += self.index_tenant(tenant)
        self.embedded += done
        return done

    def index_tenant(self, tenant_id: str, limit: int | None = None) -> int:
        """One bounded batch of one tenant's pending items (``limit`` or ``batch``)."""
        return self.search.index_pending(
            tenant_id=tenant_id,
            embedder=self.embedder,
            batch_size=self.batch,
            limit=self.batch if limit is None else limit,
        )

    def drain(self) -> int:
        """Rounds until nothing waits (tests, the CLI); how many embedded."""
        total = 0
        while n := self.run_once():
            total += n
        return total

    # -- the thread ----------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                n = self.run_once()
            except EmbeddingUnavailableError:
                # No model: nothing to index until a restart; search runs without vectors.
                log.warning("indexer stopped: %s", getattr(self.embedder, "error", "no model"))
                return
            except Exception:  # a store outage: keep going, the next round retries
                log.exception("indexing round failed")
                n = 0
            if n == 0:
                stop.wait(self.interval)

    def start(self) -> Indexer:
        self._thread = threading.Thread(
            target=self.run, args=(self._stop,), name="sgam-indexer", daemon=True
        )
        self._thread.start()
        return self

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the batch in hand."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)


def start_indexer(store: SearchableStore, *, embedder: Embedder | None = None) -> Indexer:
    """Start the indexer thread; stop it on exit."""
    return Indexer(store, embedder=embedder).start()


__all__ = [
    "DEFAULT_BATCH",
    "Indexer",
    "KindLag",
    "Pending",
    "index_lag",
    "round_robin",
    "start_indexer",
]
