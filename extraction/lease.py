"""Keep a claimed episode's lease alive while its worker is busy with it.

Leases can then stay short (a crashed worker's episode is picked up again within one
lease) while a slow model call, retries and Retry-After pauses included, never loses it.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from types import TracebackType

from graph.errors import SgamError
from graph.queue import QueueStore
from graph.timeutil import utcnow

log = logging.getLogger("sgam.extraction")


class LeaseKeeper:
    """Context manager: renews the lease every third of its length until exit."""

    def __init__(
        self, queue: QueueStore, *, tenant_id: str, episode_id: str, owner: str, seconds: float
    ) -> None:
        self.queue = queue
        self.tenant_id = tenant_id
        self.episode_id = episode_id
        self.owner = owner
        self.seconds = seconds
        self.lost = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease-{episode_id}", daemon=True)

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._done.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._done.wait(self.seconds / 3):
            try:
                kept = self.queue.extend_lease(
                    tenant_id=self.tenant_id,
                    episode_id=self.episode_id,
                    owner=self.owner,
                    lease_until=utcnow() + timedelta(seconds=self.seconds),
                )
            except SgamError as e:  # the store hiccupped; the next beat may get through
                log.warning("cannot renew the lease of %s: %s", self.episode_id, e)
                continue
            if not kept:
                self.lost = True
                log.warning("lost the lease of episode %s to another worker", self.episode_id)
                return
