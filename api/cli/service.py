"""``sgam serve`` and ``sgam worker``: the processes of a deployment."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

Store = Annotated[
    str | None,
    typer.Option("--store", metavar="URL", help="Store URL (default SGAM_STORE_URL or sqlite)."),
]


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
    app.command("worker")(worker)


def serve(
    host: Annotated[
        str | None, typer.Option("--host", help="Listen address (default 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port (default 8080).")] = None,
    store: Store = None,
    workers: Annotated[
        int | None,
        typer.Option("--workers", help="Extraction workers in the server (SGAM_WORKERS)."),
    ] = None,
) -> int:
    """Run the REST API (uvicorn, one process).

    Exit status 1 when it refuses to start, with the reason on stderr.
    """
    from api.server import ServeRefused, serve
    from api.settings import Settings

    given: dict[str, Any] = {"host": host, "port": port, "store_url": store, "workers": workers}
    try:
        serve(Settings(**{k: v for k, v in given.items() if v is not None}))
    except ServeRefused as e:
        print(e.message, file=sys.stderr)
        return 1
    return 0


def worker(
    store: Store = None,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Threads (default SGAM_WORKERS).")
    ] = None,
) -> int:
    """Run extraction queue workers against the store."""
    from extraction import ExtractionSettings, run_worker

    return run_worker(ExtractionSettings(), store_url=store, count=workers)
