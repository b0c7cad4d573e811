"""Run the API with uvicorn, one process: ``serve(settings)`` is what ``sgam serve`` calls.

With no API keys configured the server runs open, so it refuses (exit status 1, with the
reason on stderr) to listen anywhere but on a loopback address.
"""

from __future__ import annotations

import gc
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import uvicorn

from api.app import create_app
from api.auth import is_loopback
from api.observability import log_config
from api.settings import Settings
from graph.embeddings import default_embedder
from graph.errors import SgamError
from graph.port import Store


class ServeRefused(SystemExit):
    """``serve`` will not start. Uncaught, Python prints the message and exits with 1."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def check_bind(settings: Settings) -> None:
    if settings.open and not is_loopback(settings.host):
        raise ServeRefused(
            f"sgam serve: refusing to listen on {settings.host!r} with no API keys configured: "
            "an open server must stay on loopback. Set SGAM_API_KEYS (tenant:key,...) "
            "or use --host 127.0.0.1."
        )


def _config(settings: Settings, store: Store | None) -> uvicorn.Config:
    app = create_app(settings, store=store)
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        # Request ids in every line; SGAM_LOG_FORMAT=json for one JSON object per line.
        log_config=log_config(settings.log_format, settings.log_level),
        lifespan="on",
        server_header=False,
        workers=1,
    )


def serve(settings: Settings) -> None:
    """Serve until interrupted. Raises :class:`ServeRefused` (a ``SystemExit``) on refusal."""
    check_bind(settings)
    try:
        config = _config(settings, None)
    except SgamError as e:
        raise ServeRefused(f"sgam serve: cannot open the store {settings.store_url!r}: {e}") from e
    freeze_startup_heap(lambda: default_embedder().state)
    uvicorn.Server(config).run()


LOADING_STATES = ("idle", "loading")


def freeze_startup_heap(
    model_state: Callable[[], str], *, poll: float = 0.2, timeout: float = 900.0
) -> threading.Thread:
    """Move what the process holds for good out of the cyclic GC's sight: now (modules, the
    app) and again once the embedding model has loaded (or failed to); returns the thread
    that waits for the model.

    The model brings ~0.5 million tracked objects, and every full collection walks them
    all: a 1,000-fact request makes enough garbage to trigger one every few requests,
    each hundreds of ms (measured: a third of a request's CPU). Frozen objects are never
    collected; what is frozen lives as long as the process anyway. The server process
    only (`sgam serve`), never a test's: freezing is per process.
    """
    gc.freeze()

    def after_load() -> None:
        deadline = time.monotonic() + timeout
        while model_state() in LOADING_STATES and time.monotonic() < deadline:
            time.sleep(poll)
        gc.freeze()

    waiter = threading.Thread(target=after_load, name="sgam-heap-freeze", daemon=True)
    waiter.start()
    return waiter


@contextmanager
def running(
    settings: Settings,
    *,
    store: Store | None = None,
    start_timeout: float = 30.0,
    stop_timeout: float = 10.0,
) -> Iterator[str]:
    """Serve in a background thread on ``settings.host`` (port 0: any free port); yield the
    base URL, stop at exit. For tests and benchmarks that need real HTTP on loopback.

    At exit the server first finishes the requests in flight, for up to ``stop_timeout``
    seconds, then stops without waiting for the rest; the listening socket is closed only
    once the server thread has ended (it is the server's until then)."""
    check_bind(settings)
    server = uvicorn.Server(_config(settings, store))
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((settings.host, settings.port))
    port = sock.getsockname()[1]
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="sgam-server", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + start_timeout
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not server.started:
            raise RuntimeError("the server did not start")
        host = f"[{settings.host}]" if family == socket.AF_INET6 else settings.host
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=stop_timeout)
        if thread.is_alive():
            server.force_exit = True  # stop waiting for requests still in flight
            thread.join()
        sock.close()
