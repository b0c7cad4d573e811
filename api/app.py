"""The app factory: ``create_app(settings, store=...)``; nothing is built at import time.

Request path, outermost first: metrics → tenant gate (401/404 before anything reads the
request) → request body (413; 400 for JSON the stores cannot hold) → FastAPI (validation,
routes, problem+json handlers).
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.auth import KeyRing, TenantGate
from api.deps import AppContext
from api.errors import error_response, install_error_handlers, problem_response
from api.limits import body_nesting_error
from api.metrics import Metrics, MetricsMiddleware
from api.problems import HTTP_PROBLEMS, PayloadTooLargeError
from api.routes import routers
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

API_VERSION = "1.0.0"
DESCRIPTION = """\
Temporal knowledge-graph memory for AI agents: typed facts with validity intervals and
provenance. Every data path is under `/v1/tenants/{tenant}`; send
`Authorization: Bearer <key>`. Errors are `application/problem+json` (RFC 9457).
"""


INT64 = 2**63
# A \u escape of a UTF-16 surrogate; paired ones (emoji) are fine, lone ones are not text.
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class _NotPortableJSON(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _NotPortableJSON(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotPortableJSON(f"{text} is out of the range of a double")
    return value


def _int64(text: str) -> int:
    value = int(text)
    if not -INT64 <= value < INT64:
        raise _NotPortableJSON(f"{text} does not fit in a 64-bit integer")
    return value


def json_body_problem(body: bytes) -> str | None:
    """Why a JSON body cannot be stored as sent, or None.

    Python's parser accepts what JSON (RFC 8259) does not carry and the stores cannot
    hold: ``NaN``/``Infinity``, numbers that overflow a double or a 64-bit integer, and
    lone UTF-16 surrogates. Malformed JSON is left to FastAPI (400 as well).
    """
    try:
        data = json.loads(
            body, parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_int64
        )
    except _NotPortableJSON as e:
        return str(e)
    except ValueError:  # malformed: FastAPI answers it
        return None
    if SURROGATE_ESCAPE.search(body):
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return "a string holds a lone UTF-16 surrogate (not Unicode text)"
    return None


def _is_json(headers: list[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        if name == b"content-type":
            media = value.split(b";", 1)[0].strip().lower()
            return media == b"application/json" or (
                media.startswith(b"application/") and media.endswith(b"+json")
            )
    return False


class RequestBodyMiddleware:
    """Reads the body once, before any route: 413 over ``max_body_bytes`` (by
    ``Content-Length`` and by counting what streams in), 422 for a JSON body nested past
    :data:`api.limits.MAX_BODY_DEPTH`, 400 for a JSON body that JSON cannot carry
    (:func:`json_body_problem`). A refused request writes nothing.
    """

    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.limit = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
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
    """Every route template the app serves (documented ones and the docs themselves)."""
    paths = list(app.openapi().get("paths", {}))
    return [*paths, *(p for p in (app.openapi_url, app.docs_url) if p)]


def create_app(settings: Settings | None = None, *, store: Store | None = None) -> FastAPI:
    """Build the app. Without ``store`` it opens ``settings.store_url`` and closes it at
    shutdown; a store passed in belongs to the caller."""
    settings = settings if settings is not None else Settings()
    owned = store is None
    the_store = open_store(settings.store_url) if store is None else store
    metrics = Metrics()
    extractor = build_extractor(settings)
    ctx = AppContext(
        settings=settings,
        store=the_store,
        service=MemoryService(the_store),
        metrics=metrics,
        keyring=KeyRing(settings.api_keys),
        extractor=extractor,
    )

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
            yield
        finally:
            if purger is not None:
                purger.stop()
            if indexer is not None:
                indexer.stop()
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
    )
    app.state.ctx = ctx
    if isinstance(the_store, SearchableStore):
        searchable = the_store
        metrics.watch_index(lambda: index_lag(searchable.search, default_embedder().name))
    install_error_handlers(app)
    for router in routers():
        app.include_router(router)
    install_ui(app)
    # add_middleware puts each new one outside the previous: innermost first.
    app.add_middleware(RequestBodyMiddleware, max_body_bytes=settings.max_body_bytes)
    app.add_middleware(TenantGate, keyring=ctx.keyring)
    app.add_middleware(MetricsMiddleware, metrics=metrics, templates=lambda: _templates(app))
    return app
