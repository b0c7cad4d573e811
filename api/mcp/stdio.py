"""``sgam mcp``: the tools over stdio, for one tenant, in the agent's own process tree.

stdout carries the protocol, so every log line goes to stderr. The process serves until
the client closes stdin; background extraction (``extract=background``) is done by its own
queue workers (``SGAM_WORKERS``, for this tenant only), as in ``sgam serve``, with the
search indexer beside them.
"""

from __future__ import annotations

import logging.config
import sys
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from api.mcp.server import SgamMcp
from api.mcp.tools import Services
from api.metrics import Metrics
from api.observability import configure_tracing, flush_traces, log_config
from api.settings import Settings
from extraction import build_extractor, start_workers
from graph.embeddings import default_embedder
from graph.errors import SgamError
from graph.model import TENANT_RE, valid_tenant
from graph.retrieval import SearchableStore
from graph.retrieval.indexer import start_indexer
from graph.service import MemoryService
from graph.stores import open_store


async def _serve(mcp: SgamMcp) -> None:
    async with stdio_server() as (read, write):
        await mcp.server.run(read, write, mcp.server.create_initialization_options())


def run_stdio(store_url: str | None, tenant: str, *, settings: Settings | None = None) -> int:
    """Serve ``tenant``'s memory in the store at ``store_url`` (default SGAM_STORE_URL)
    over stdin/stdout until the client hangs up; the exit status (2: bad arguments or an
    unreachable store, with one line on stderr)."""
    settings = settings if settings is not None else Settings()
    logging.config.dictConfig(log_config(settings.log_format, settings.log_level))
    if not valid_tenant(tenant):
        print(f"sgam mcp: {tenant!r} is not a tenant id (pattern {TENANT_RE})", file=sys.stderr)
        return 2
    configure_tracing(settings)
    url = store_url or settings.store_url
    try:
        store = open_store(url)
    except SgamError as e:
        print(f"sgam mcp: cannot open the store {url!r}: {e}", file=sys.stderr)
        return 2
    extractor = build_extractor(settings)
    service = MemoryService(store)
    services = Services(service=service, metrics=Metrics(), settings=settings, extractor=extractor)

    def fixed(_: Any) -> str:
        return tenant

    mcp = SgamMcp(services, tenant_of=fixed, max_argument_bytes=settings.max_body_bytes)
    pool = (
        start_workers(service, extractor, settings, tenant_id=tenant) if settings.workers else None
    )
    # As in `sgam serve`: the model loads in the background and, beside the workers, the
    # indexer embeds new items off the call path (without it, search finds them by words
    # and graph only).
    default_embedder().start_loading()
    indexer = (
        start_indexer(store) if settings.workers and isinstance(store, SearchableStore) else None
    )
    try:
        anyio.run(_serve, mcp)
    except KeyboardInterrupt:
        pass
    finally:
        if indexer is not None:
            indexer.stop()
        if pool is not None:
            pool.stop()
        if extractor is not None:
            extractor.close()
        store.close()
        flush_traces()
    return 0
