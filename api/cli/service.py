"""``sgam serve``, ``sgam worker`` and ``sgam mcp``: the processes of a deployment."""

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
    app.command("mcp")(mcp)


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
    from api.server import freeze_startup_heap
    from extraction import ExtractionSettings, run_worker
    from graph.embeddings import default_embedder

    # Long-lived like `sgam serve`: its indexer holds the model's heap for good.
    freeze_startup_heap(lambda: default_embedder().state)
    return run_worker(ExtractionSettings(), store_url=store, count=workers)


def mcp(
    store: Store = None,
    tenant: Annotated[
        str | None,
        typer.Option("--tenant", envvar="SGAM_TENANT", help="The one tenant served."),
    ] = None,
) -> int:
    """Serve one tenant's memory as MCP tools over stdio (for an agent's MCP client).

    stdout carries the protocol; logs go to stderr. Exit status 2 when the tenant is
    missing or invalid or the store cannot be opened, with one line on stderr.
    """
    if not tenant:
        print("sgam mcp: name the tenant: --tenant T (or SGAM_TENANT)", file=sys.stderr)
        return 2
    from api.mcp import run_stdio
    from api.server import freeze_startup_heap
    from graph.embeddings import default_embedder

    # Long-lived like `sgam serve`: searches hold the model's heap for good.
    freeze_startup_heap(lambda: default_embedder().state)
    return run_stdio(store, tenant)
