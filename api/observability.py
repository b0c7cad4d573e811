"""Request ids, logs and traces: what an operator follows one request by.

- **Request id.** Every HTTP response carries ``X-Request-ID``: the caller's own when it
  sent a sane one (1-128 characters of ``A-Z a-z 0-9 . _ : / + = -``), else a new one.
  The id is in a context variable for the whole request, so it is in every log line
  (:class:`RequestIdFilter`) and every problem body (:func:`api.errors.problem_response`).
- **Logs.** :func:`log_config` is the ``logging.config.dictConfig`` of the server and of
  ``sgam mcp``: text (``SGAM_LOG_FORMAT=text``, the default) or one JSON object per line
  (``SGAM_LOG_FORMAT=json``), always on stderr (:class:`StderrHandler`).
- **Traces.** With an OTLP endpoint (``SGAM_OTLP_ENDPOINT``, or the standard
  ``OTEL_EXPORTER_OTLP_ENDPOINT``/``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), spans are
  exported over OTLP/HTTP: the request (:class:`ObservabilityMiddleware`), the service,
  each store query and each model call (through :mod:`graph.tracing`). Without one,
  tracing is off and costs a global lookup per instrumented call.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import threading
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic_settings import BaseSettings, SettingsConfigDict
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graph import tracing

REQUEST_ID_HEADER = "X-Request-ID"
REQUEST_ID_SCOPE_KEY = "sgam.request_id"
_SANE_ID = re.compile(r"^[A-Za-z0-9._:/+=-]{1,128}$")
_request_id: ContextVar[str | None] = ContextVar("sgam_request_id", default=None)

OTEL_ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


class ObservabilitySettings(BaseSettings):
    """``SGAM_LOG_FORMAT`` (text|json) and ``SGAM_OTLP_ENDPOINT`` (an OTLP/HTTP base URL,
    e.g. ``http://collector:4318``; traces go to its ``/v1/traces``)."""

    model_config = SettingsConfigDict(env_prefix="SGAM_", extra="ignore")

    log_format: Literal["text", "json"] = "text"
    otlp_endpoint: str | None = None


# -- request ids -----------------------------------------------------------------------
def current_request_id() -> str | None:
    """The id of the request being served in this context, if any."""
    return _request_id.get()


def accept_request_id(presented: str | None) -> str:
    """The caller's id when it is sane, else a fresh one (never echo arbitrary text)."""
    if presented is not None and _SANE_ID.match(presented):
        return presented
    return uuid.uuid4().hex


def bind_request_id(value: str | None) -> None:
    """Set the request id of this context (a tool call carried by an HTTP request)."""
    _request_id.set(value)


# -- logs ------------------------------------------------------------------------------
class RequestIdFilter(logging.Filter):
    """Puts ``request_id`` (or ``-``) on every record a handler emits."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _request_id.get() or "-"
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request_id (and trace ids
    when tracing is on), exception text when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": _request_id.get(),  # null outside a request
        }
        out.update(_trace_ids())
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def _trace_ids() -> dict[str, str]:
    if not tracing.enabled():
        return {}
    from opentelemetry import trace

    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return {}
    return {"trace_id": f"{ctx.trace_id:032x}", "span_id": f"{ctx.span_id:016x}"}


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a record is emitted, not the stream it was
    when logging was configured (which may have been replaced and closed since: a server
    started inside a test, or under a process that swaps its streams)."""

    def __init__(self, level: int = logging.NOTSET) -> None:
        logging.Handler.__init__(self, level)

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _: Any) -> None:
        pass  # always the current sys.stderr


OUR_LOGGERS = ("sgam", "api", "graph", "extraction")


def log_config(log_format: Literal["text", "json"] = "text", level: str = "info") -> dict[str, Any]:
    """The ``dictConfig`` for uvicorn's loggers and ours; everything on stderr (stdout is
    the protocol channel of ``sgam mcp``)."""
    if log_format == "json":
        formatters: dict[str, Any] = {
            "default": {"()": "api.observability.JsonFormatter"},
            "access": {"()": "api.observability.JsonFormatter"},
        }
    else:
        formatters = {
            "default": {
                "()": "uvicorn.logging.DefaultFormatter",
                "fmt": "%(levelprefix)s [%(request_id)s] %(name)s: %(message)s",
                "use_colors": False,
            },
            "access": {
                "()": "uvicorn.logging.AccessFormatter",
                "fmt": '%(levelprefix)s [%(request_id)s] %(client_addr)s - "%(request_line)s" '
                "%(status_code)s",
                "use_colors": False,
            },
        }
    handler = {"class": "api.observability.StderrHandler", "filters": ["request_id"]}
    upper = "DEBUG" if level.lower() == "trace" else level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": "api.observability.RequestIdFilter"}},
        "formatters": formatters,
        "handlers": {
            "default": {**handler, "formatter": "default"},
            "access": {**handler, "formatter": "access"},
        },
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": upper, "propagate": False},
            "uvicorn.error": {"level": upper},
            "uvicorn.access": {"handlers": ["access"], "level": upper, "propagate": False},
            # One line per model request at INFO is noise; failures are logged by sgam.
            "httpx": {"level": "WARNING"},
            # At INFO it draws a progress bar on stderr for every query it embeds.
            "sentence_transformers": {"level": "WARNING"},
            # sgam's own packages, at the level asked. The root logger is left alone:
            # what other libraries log (the neo4j driver's retries) stays theirs to route,
            # and a command line in the same process keeps its stderr to itself.
            **{
                name: {"handlers": ["default"], "level": upper, "propagate": False}
                for name in OUR_LOGGERS
            },
        },
    }


# -- traces ----------------------------------------------------------------------------
_setup_lock = threading.Lock()
_provider: Any = None  # the SDK TracerProvider this process exports with


def otlp_configured(settings: ObservabilitySettings) -> bool:
    return bool(settings.otlp_endpoint) or any(os.environ.get(v) for v in OTEL_ENDPOINT_VARS)


def configure_tracing(settings: ObservabilitySettings) -> bool:
    """Export spans over OTLP/HTTP when an endpoint is configured (once per process);
    True when tracing is on. A provider set by a test (:func:`graph.tracing.enable`)
    is left alone."""
    global _provider
    if tracing.enabled():
        return True
    if not otlp_configured(settings):
        return False
    with _setup_lock:
        if _provider is None:
            from opentelemetry import trace
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            endpoint = None
            if settings.otlp_endpoint:
                endpoint = settings.otlp_endpoint.rstrip("/") + "/v1/traces"
            provider = TracerProvider(
                resource=Resource.create(
                    {"service.name": os.environ.get("OTEL_SERVICE_NAME", "sgam")}
                )
            )
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
            # Global too, so libraries that trace themselves (the MCP SDK) join the trace.
            trace.set_tracer_provider(provider)
            _provider = provider
        tracing.enable(_provider)
    return True


def flush_traces() -> None:
    """Export what is buffered (at shutdown)."""
    if _provider is not None:
        _provider.force_flush()


# -- the middleware --------------------------------------------------------------------
class ObservabilityMiddleware:
    """Outermost: binds the request id, answers it in ``X-Request-ID``, and wraps the
    request in a server span (joining the caller's trace from ``traceparent``)."""

    def __init__(self, app: ASGIApp, *, route_of: Callable[[Scope], str] | None = None) -> None:
        self.app = app
        # The route template of a request (spans are named by it, never by the raw path).
        self.route_of = route_of or (lambda scope: getattr(scope.get("route"), "path", ""))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        presented: str | None = None
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                presented = value.decode("latin-1")
                break
        rid = accept_request_id(presented)
        scope[REQUEST_ID_SCOPE_KEY] = rid
        token = _request_id.set(rid)
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = rid
            await send(message)

        try:
            tracer = tracing.current_tracer()
            if tracer is None:
                await self.app(scope, receive, send_with_id)
                return
            await self._traced(tracer, rid, scope, receive, send_with_id, lambda: status)
        finally:
            _request_id.reset(token)

    async def _traced(
        self,
        tracer: Any,
        rid: str,
        scope: Scope,
        receive: Receive,
        send: Send,
        status: Any,
    ) -> None:
        from opentelemetry import propagate, trace

        carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        method = str(scope.get("method", "GET"))
        with tracer.start_as_current_span(
            f"HTTP {method}",
            context=propagate.extract(carrier),
            kind=trace.SpanKind.SERVER,
            attributes={"http.request.method": method, "sgam.request_id": rid},
        ) as span:
            try:
                await self.app(scope, receive, send)
            finally:
                route = self.route_of(scope)
                if route:
                    span.update_name(f"{method} {route}")
                    span.set_attribute("http.route", route)
                code = status()
                span.set_attribute("http.response.status_code", code)
                if code >= 500:
                    span.set_status(trace.StatusCode.ERROR)
