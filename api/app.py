"""The app factory: ``create_app(settings, store=...)``; nothing is built at import time.

Request path, outermost first: request id and trace span (:mod:`api.observability`, outside
even the 500 handler) → metrics → tenant gate (401/404 before anything reads the request) →
request body (413; 400 for JSON the stores cannot hold) → FastAPI (validation, routes,
problem+json handlers). ``/mcp`` is the MCP endpoint (:mod:`api.mcp`), which checks its
own key and body size.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.auth import KeyRing, TenantGate
from api.deps import AppContext
from api.errors import error_response, install_error_handlers, problem_response
from api.limits import body_nesting_error, json_body_problem, json_media_type
from api.mcp import McpHttp
from api.metrics import MeteredExtractor, Metrics, MetricsMiddleware, RouteTemplates
from api.observability import ObservabilityMiddleware, configure_tracing, flush_traces
from api.problems import HTTP_PROBLEMS, PayloadTooLargeError
from api.routes import routers
from api.routes.common import single_valued_query
from api.schemas import API_VERSION
from api.settings import Settings
from api.ui import install as install_ui
from extraction import build_extractor, start_workers
from graph.embeddings import default_embedder
from graph.erasure import ErasableStore
from graph.port import Store
from graph.retention import Purger
from graph.retrieval import SearchableStore
from graph.retrieval.indexer import index_lag, start_indexer
from graph.service import MemoryService
from graph.stores import open_store

log = logging.getLogger("sgam.api")

DESCRIPTION = """\
Temporal knowledge-graph memory for AI agents: typed facts with validity intervals and
provenance. Every data path is under `/v1/tenants/{tenant}`; send
`Authorization: Bearer <key>`. Errors are `application/problem+json` (RFC 9457).
"""


MCP_PATH = "/mcp"


def _is_json(headers: list[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        if name == b"content-type":
            return json_media_type(value)
    return False


class RequestBodyMiddleware:
    """Reads the body once, before any route: 413 over ``max_body_bytes`` (by
    ``Content-Length`` and by counting what streams in), 422 for a JSON body nested past
    :data:`api.limits.MAX_BODY_DEPTH`, 400 for a JSON body that JSON cannot carry
    (:func:`json_body_problem`). A refused request writes nothing.
    """

    def __init__(self, app: ASGIApp, *, max_body_bytes: int, exempt: tuple[str, ...] = ()) -> None:
        self.app = app
        self.limit = max_body_bytes
        self.exempt = exempt  # paths that check their bodies themselves (/mcp)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.exempt:
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await self._bad_request("invalid Content-Length", scope, receive, send)
                    return
                if declared > self.limit:
                    await self._too_large(scope, receive, send)
                    return
        chunks: list[bytes] = []
        total = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > self.limit:
                await self._too_large(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body and _is_json(scope["headers"]):
            # Linear, but over up to max_body_bytes: off the event loop.
            too_deep = await run_in_threadpool(body_nesting_error, body)
            if too_deep is not None:
                await error_response(too_deep, instance=scope["path"])(scope, receive, send)
                return
            reason = await run_in_threadpool(json_body_problem, body)
            if reason is not None:
                detail = f"the request body is not portable JSON: {reason}"
                await self._bad_request(detail, scope, receive, send)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _bad_request(self, detail: str, scope: Scope, receive: Receive, send: Send) -> None:
        slug, title = HTTP_PROBLEMS[400]
        response = problem_response(
            status=400, slug=slug, title=title, detail=detail, instance=scope["path"]
        )
        await response(scope, receive, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(PayloadTooLargeError(self.limit), instance=scope["path"])
        response.headers["Connection"] = "close"
        await response(scope, receive, send)


class SgamApp(FastAPI):
    """FastAPI whose OpenAPI documents every error as ``application/problem+json``."""

    def openapi(self) -> dict[str, Any]:
        schema = super().openapi()  # cached by FastAPI until the routes change
        _problem_media_types(schema)  # idempotent
        return schema

    def build_middleware_stack(self) -> ASGIApp:
        # Outermost, around the 500 handler too: every answer carries its request id.
        routes = RouteTemplates(lambda: _templates(self))
        return ObservabilityMiddleware(super().build_middleware_stack(), route_of=routes.of)


def _problem_media_types(schema: dict[str, Any]) -> None:
    for item in schema.get("paths", {}).values():
        for op in item.values():
            for status, resp in op.get("responses", {}).items():
                content = resp.get("content")
                if status[:1] in "45" and content and "application/json" in content:
                    content["application/problem+json"] = content.pop("application/json")
    comps = schema.get("components", {}).get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        comps.pop(unused, None)


def _templates(app: FastAPI) -> list[str]:
    """Every route template the app serves (documented ones, the docs themselves, /mcp)."""
    paths = list(app.openapi().get("paths", {}))
    return [*paths, *(p for p in (app.openapi_url, app.docs_url, MCP_PATH) if p)]


def create_app(settings: Settings | None = None, *, store: Store | None = None) -> FastAPI:
    """Build the app. Without ``store`` it opens ``settings.store_url`` and closes it at
    shutdown; a store passed in belongs to the caller."""
    settings = settings if settings is not None else Settings()
    owned = store is None
    the_store = open_store(settings.store_url) if store is None else store
    metrics = Metrics()
    configure_tracing(settings)
    extractor = build_extractor(settings)
    if extractor is not None:  # its model usage is totalled in /metrics
        extractor = MeteredExtractor(extractor, metrics)
    ctx = AppContext(
        settings=settings,
        store=the_store,
        service=MemoryService(the_store),
        metrics=metrics,
        keyring=KeyRing(settings.api_keys),
        extractor=extractor,
    )
    mcp = McpHttp.from_context(ctx)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # The embedding model loads in the background, so the first search does not wait
        # for it; /readyz says when it is ready.
        default_embedder().start_loading()
        # Queue workers run beside the API (SGAM_WORKERS; more as `sgam worker` processes),
        # and with them the indexer, which embeds new items off the request path.
        pool = start_workers(ctx.service, extractor, settings) if settings.workers else None
        indexer = (
            start_indexer(the_store)
            if settings.workers and isinstance(the_store, SearchableStore)
            else None
        )
        purger = (
            Purger(
                the_store,
                schema_of=lambda t: the_store.get_schema(tenant_id=t),
                interval=settings.purge_interval_seconds,
                on_error=lambda e: log.warning("retention pass failed: %s", e),
            ).start()
            if settings.workers
            and settings.purge_interval_seconds
            and isinstance(the_store, ErasableStore)
            else None
        )
        try:
            async with mcp.run():  # the MCP transport's task group lives as long as the app
                yield
        finally:
            if purger is not None:
                purger.stop()
            if indexer is not None:
                indexer.stop()
            flush_traces()
            if pool is not None:
                pool.stop()
            if extractor is not None:
                extractor.close()
            if owned:
                the_store.close()

    app = SgamApp(
        title="sgam",
        version=API_VERSION,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # /docs is served by api.ui from vendored assets (works offline)
        redoc_url=None,
        openapi_url="/openapi.json",
        # Before every route: a single-valued query parameter comes once (422 otherwise).
        dependencies=[Depends(single_valued_query)],
    )
    app.state.ctx = ctx
    if isinstance(the_store, SearchableStore):
        searchable = the_store
        metrics.watch_index(lambda: index_lag(searchable.search, default_embedder().name))
    install_error_handlers(app)
    for router in routers():
        app.include_router(router)
    install_ui(app)
    app.router.routes.append(Route(MCP_PATH, endpoint=mcp, include_in_schema=False))
    # add_middleware puts each new one outside the previous: innermost first.
    app.add_middleware(
        RequestBodyMiddleware, max_body_bytes=settings.max_body_bytes, exempt=(MCP_PATH,)
    )
    app.add_middleware(TenantGate, keyring=ctx.keyring)
    app.add_middleware(MetricsMiddleware, metrics=metrics, templates=lambda: _templates(app))
    return app
