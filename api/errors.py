"""Every error answers ``application/problem+json`` (RFC 9457).

One handler on :class:`~graph.errors.SgamError` serves the whole tree (the status comes
from the table in :mod:`api.problems`); others turn FastAPI's request validation errors,
Starlette's HTTP errors and anything unexpected into problems. The ASGI middlewares that
answer before routing (auth, body limit) build their problems with :func:`error_response`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.metrics import Metrics
from api.observability import current_request_id
from api.problems import (
    HTTP_PROBLEMS,
    PayloadTooLargeError,
    UnauthorizedError,
    problem_for,
    problem_type,
)
from graph.errors import (
    ConflictError,
    FactConflictError,
    SgamError,
    StoreFailedError,
    StoreUnavailableError,
    ValidationError,
)

log = logging.getLogger("sgam.api")

PROBLEM_JSON = "application/problem+json"
LOCATIONS = ("body", "query", "path", "header", "cookie")


class ProblemResponse(JSONResponse):
    media_type = PROBLEM_JSON


def problem_response(
    *,
    status: int,
    slug: str,
    title: str,
    detail: str | None,
    instance: str | None,
    headers: dict[str, str] | None = None,
    **members: Any,
) -> ProblemResponse:
    body = problem_body(
        status=status, slug=slug, title=title, detail=detail, instance=instance, **members
    )
    return ProblemResponse(body, status_code=status, headers=headers)


def problem_body(
    *, status: int, slug: str, title: str, detail: str | None, instance: str | None, **members: Any
) -> dict[str, Any]:
    """The RFC 9457 members, the ones naming what went wrong, and the request id."""
    body: dict[str, Any] = {
        "type": problem_type(slug),
        "title": title,
        "status": status,
        "detail": detail,
        "instance": instance,
    }
    body.update({k: v for k, v in members.items() if v is not None})
    request_id = current_request_id()
    if request_id is not None and "request_id" not in body:
        body["request_id"] = request_id
    return body


def _json_safe(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


DEFAULT_RETRY_AFTER = 5  # seconds, when no setting is at hand (api.settings has the same)


def error_response(
    error: SgamError, *, instance: str | None, retry_after: int = DEFAULT_RETRY_AFTER
) -> ProblemResponse:
    """The problem for a domain or API error, with the members that name what went wrong.
    ``retry_after``: the Retry-After of a 503 whose error does not name its own."""
    status, body, headers = error_problem(error, instance=instance, retry_after=retry_after)
    return ProblemResponse(body, status_code=status, headers=headers or None)


def error_problem(
    error: SgamError, *, instance: str | None, retry_after: int = DEFAULT_RETRY_AFTER
) -> tuple[int, dict[str, Any], dict[str, str]]:
    """Status, body and headers of the problem for an error (REST and MCP share it)."""
    status, slug, title = problem_for(error)
    members: dict[str, Any] = {}
    headers: dict[str, str] = {}
    detail: str = str(error)
    if isinstance(error, ValidationError):
        members["errors"] = [e.as_dict() for e in error.errors]
    elif isinstance(error, FactConflictError):
        detail = error.detail
        members.update(
            conflicting_fact_id=error.conflicting_fact_id,
            conflicting_source_episode_id=error.conflicting_source_episode_id,
            source_episode_id=error.source_episode_id,
            index=error.index,
        )
    elif isinstance(error, ConflictError):
        detail = error.detail
        # Context names what clashed; it never overrides the problem's own members.
        reserved = {"type", "slug", "title", "status", "detail", "instance", "headers"}
        members.update({k: _json_safe(v) for k, v in error.context.items() if k not in reserved})
    elif isinstance(error, StoreUnavailableError):
        wait = error.retry_after if error.retry_after is not None else retry_after
        headers["Retry-After"] = str(max(1, int(wait)))
    elif isinstance(error, UnauthorizedError):
        headers["WWW-Authenticate"] = 'Bearer realm="sgam"'
    elif isinstance(error, PayloadTooLargeError):
        members["limit"] = error.limit
    body = problem_body(
        status=status, slug=slug, title=title, detail=detail, instance=instance, **members
    )
    return status, body, headers


def validation_items(errors: Sequence[Any]) -> list[dict[str, Any]]:
    """FastAPI/pydantic errors → ``{index, field, reason, location}``.

    An item of a facts batch (``body.facts.3.valid_from``) is reported as index 3, field
    ``valid_from``; the input values themselves are never echoed.
    """
    items: list[dict[str, Any]] = []
    for err in errors:
        loc = list(err.get("loc", ()))
        location = loc[0] if loc and loc[0] in LOCATIONS else None
        rest = loc[1:] if location else loc
        index: int | None = None
        in_batch = location == "body" and len(rest) >= 2 and rest[0] == "facts"
        if in_batch and isinstance(rest[1], int):
            index, rest = rest[1], rest[2:]
        field = ".".join(str(p) for p in rest) or location
        reason = str(err.get("msg", "invalid"))
        ctx = err.get("ctx") or {}
        if err.get("type") == "value_error" and "error" in ctx:  # our validators' own words
            reason = str(ctx["error"])
        item: dict[str, Any] = {"reason": reason}
        if index is not None:
            item["index"] = index
        if field is not None:
            item["field"] = field
        if location is not None:
            item["location"] = location
        items.append(item)
    return items


def _describe(item: dict[str, Any]) -> str:
    where = []
    if "index" in item:
        where.append(f"item {item['index']}")
    if "field" in item:
        where.append(str(item["field"]))
    return f"{' '.join(where)}: {item['reason']}" if where else str(item["reason"])


def _retry_after(request: Request) -> int:
    ctx = getattr(request.app.state, "ctx", None)  # api.deps.AppContext
    seconds = getattr(getattr(ctx, "settings", None), "retry_after_seconds", None)
    return seconds if isinstance(seconds, int) else DEFAULT_RETRY_AFTER


def _metrics(request: Request) -> Metrics | None:
    ctx = getattr(request.app.state, "ctx", None)  # api.deps.AppContext
    m = getattr(ctx, "metrics", None)
    return m if isinstance(m, Metrics) else None


async def on_sgam_error(request: Request, exc: Exception) -> ProblemResponse:
    assert isinstance(exc, SgamError)
    metrics = _metrics(request)
    if metrics is not None:
        if isinstance(exc, ConflictError):
            metrics.conflicts.labels(kind=type(exc).__name__).inc()
        elif isinstance(exc, StoreUnavailableError | StoreFailedError):
            metrics.store_errors.labels(kind=type(exc).__name__).inc()
    if isinstance(exc, StoreUnavailableError):
        log.warning("store unavailable on %s %s: %s", request.method, request.url.path, exc)
    elif isinstance(exc, StoreFailedError):
        log.error("store failed on %s %s: %s", request.method, request.url.path, exc, exc_info=exc)
    return error_response(exc, instance=request.url.path, retry_after=_retry_after(request))


async def on_validation_error(request: Request, exc: Exception) -> ProblemResponse:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    malformed = [e for e in errors if e.get("type") == "json_invalid"]
    if malformed:
        ctx = malformed[0].get("ctx") or {}
        return problem_response(
            status=400,
            slug=HTTP_PROBLEMS[400][0],
            title=HTTP_PROBLEMS[400][1],
            detail=f"the request body is not valid JSON: {ctx.get('error', 'decode error')}",
            instance=request.url.path,
        )
    body = validation_problem(errors, instance=request.url.path)
    return ProblemResponse(body, status_code=422)


def validation_problem(errors: Sequence[Any], *, instance: str | None) -> dict[str, Any]:
    """The 422 problem body for pydantic errors (located as FastAPI locates them)."""
    items = validation_items(errors)
    detail = "; ".join(_describe(i) for i in items)
    return problem_body(
        status=422,
        slug=HTTP_PROBLEMS[422][0],
        title=HTTP_PROBLEMS[422][1],
        detail=detail or "invalid request",
        instance=instance,
        errors=items,
    )


async def on_http_error(request: Request, exc: Exception) -> ProblemResponse:
    assert isinstance(exc, StarletteHTTPException)
    slug, title = HTTP_PROBLEMS.get(exc.status_code, ("http-error", "HTTP error"))
    detail = exc.detail if isinstance(exc.detail, str) else title
    return problem_response(
        status=exc.status_code,
        slug=slug,
        title=title,
        detail=detail,
        instance=request.url.path,
        headers=dict(exc.headers) if exc.headers else None,
    )


async def on_unexpected(request: Request, exc: Exception) -> ProblemResponse:
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    slug, title = HTTP_PROBLEMS[500]
    return problem_response(
        status=500, slug=slug, title=title, detail="internal error", instance=request.url.path
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(SgamError, on_sgam_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
    app.add_exception_handler(Exception, on_unexpected)
