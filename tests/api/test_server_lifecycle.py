"""``api.server.running``: the server thread ends before its listening socket is closed."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx

from api.server import running
from api.settings import Settings
from graph.stores.sqlite.store import SqliteStore


class _StuckPing(SqliteStore):
    """A real SQLite store whose ping waits until released: a request stuck in flight."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.entered = threading.Event()
        self.release = threading.Event()

    def ping(self) -> None:
        self.entered.set()
        self.release.wait(timeout=30)
        super().ping()


def test_exit_waits_for_the_server_thread_before_closing_its_socket(tmp_path: Path) -> None:
    store = _StuckPing(tmp_path / "s.db")
    store.init()
    settings = Settings(host="127.0.0.1", port=0, log_level="warning", workers=0)
    answers: list[int | str] = []

    def probe(url: str) -> None:
        try:
            answers.append(httpx.get(f"{url}/readyz", timeout=30).status_code)
        except httpx.HTTPError as e:
            answers.append(type(e).__name__)

    try:
        with running(settings, store=store, stop_timeout=0.5) as url:
            caller = threading.Thread(target=probe, args=(url,))
            caller.start()
            assert store.entered.wait(timeout=10)
        # running() has returned: its server thread must be over, not left serving on a
        # socket that was closed under it.
        alive = [t.name for t in threading.enumerate() if t.name == "sgam-server"]
        assert alive == []
    finally:
        store.release.set()
        caller.join(timeout=30)
        store.close()
    assert len(answers) == 1
