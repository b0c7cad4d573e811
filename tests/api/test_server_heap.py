"""``api.server.freeze_startup_heap``: the startup heap leaves the cyclic GC's sight, and
so does the embedding model once its load has ended (not before)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from api.server import freeze_startup_heap


@pytest.fixture
def unfrozen() -> Iterator[None]:
    # Freezing is per process: give the test process its collectable heap back.
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_freezes_now_and_again_when_the_model_has_loaded(unfrozen: None) -> None:
    state = ["idle"]
    polled = threading.Event()

    def model_state() -> str:
        polled.set()
        return state[0]

    waiter = freeze_startup_heap(model_state, poll=0.01)
    at_start = gc.get_freeze_count()
    assert at_start > 0
    assert polled.wait(timeout=10)
    state[0] = "loading"
    held = [object() for _ in range(1000)]  # what the model load allocates, as lists
    loaded = [[x] for x in held]
    waiter.join(timeout=0.2)
    assert waiter.is_alive()  # still loading: nothing frozen beyond the startup heap
    assert gc.get_freeze_count() == at_start
    state[0] = "ready"
    waiter.join(timeout=10)
    assert not waiter.is_alive()
    assert gc.get_freeze_count() >= at_start + len(loaded)


def test_a_failed_load_ends_the_wait_too(unfrozen: None) -> None:
    waiter = freeze_startup_heap(lambda: "failed", poll=0.01)
    waiter.join(timeout=10)
    assert not waiter.is_alive()
    assert gc.get_freeze_count() > 0
