"""Request ids, logs, traces and model usage, through the app (both stores)."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client.parser import text_string_to_metric_families

from api.observability import (
    JsonFormatter,
    RequestIdFilter,
    StderrHandler,
    accept_request_id,
    log_config,
)
from extraction.loopback import LoopbackLLM, answer, completion
from graph import tracing
from tests.api.conftest import AppFactory
from tests.api.helpers import problem
from tests.integration.test_extraction_pipeline import fact

HEX32 = re.compile(r"^[0-9a-f]{32}$")


# -- request ids -------------------------------------------------------------------------
def test_every_answer_carries_a_request_id(make_app: AppFactory, tenant: str) -> None:
    app = make_app(api_keys=f"{tenant}:k")

    @app.get("/boom", include_in_schema=False)
    def boom() -> None:
        raise RuntimeError("a bug")

    with TestClient(app, raise_server_exceptions=False) as client:
        ok = client.get("/healthz")
        assert HEX32.match(ok.headers["X-Request-ID"])
        mine = client.get("/healthz", headers={"X-Request-ID": "trace-me:42"})
        assert mine.headers["X-Request-ID"] == "trace-me:42"
        # An id that is not sane (too long, spaces, control characters) is replaced.
        odd = client.get("/healthz", headers={"X-Request-ID": "a b" + "c" * 200})
        assert HEX32.match(odd.headers["X-Request-ID"])
        # Problems carry it, from the gate (401), validation (422) and the 500 handler.
        for r, status in (
            (client.get(f"/v1/tenants/{tenant}/facts", headers={"X-Request-ID": "r-401"}), 401),
            (
                client.get(
                    f"/v1/tenants/{tenant}/facts",
                    params={"limit": 0},
                    headers={"Authorization": "Bearer k", "X-Request-ID": "r-422"},
                ),
                422,
            ),
            (client.get("/boom", headers={"X-Request-ID": "r-500"}), 500),
        ):
            body = problem(r, status)
            assert body["request_id"] == r.headers["X-Request-ID"] == f"r-{status}"


def test_accept_request_id() -> None:
    assert accept_request_id("abc-123_x.y:z/w+=") == "abc-123_x.y:z/w+="
    for bad in (None, "", "x" * 129, "has space", "new\nline", "ünï"):
        assert HEX32.match(accept_request_id(bad)), bad


def test_log_lines_carry_the_request_id_as_json(make_app: AppFactory, tenant: str) -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter())
    api_log = logging.getLogger("sgam.api")
    api_log.addHandler(handler)
    app = make_app()

    @app.get("/boom", include_in_schema=False)
    def boom() -> None:
        raise RuntimeError("a bug")

    try:
        with TestClient(app, raise_server_exceptions=False) as client:
            r = client.get("/boom", headers={"X-Request-ID": "log-me"})
            assert r.status_code == 500
    finally:
        api_log.removeHandler(handler)
    [line] = [json.loads(x) for x in out.getvalue().splitlines()]
    assert (line["level"], line["logger"], line["request_id"]) == ("error", "sgam.api", "log-me")
    assert line["message"] == "unhandled error on GET /boom"
    assert "RuntimeError: a bug" in line["exception"]


def test_log_config_text_and_json() -> None:
    text = log_config("text", "info")
    assert "%(request_id)s" in text["formatters"]["default"]["fmt"]
    assert text["handlers"]["default"]["class"] == "api.observability.StderrHandler"
    assert text["loggers"]["sgam"] == {"handlers": ["default"], "level": "INFO", "propagate": False}
    assert "root" not in text  # libraries' records are left to whoever configured the root
    js = log_config("json", "debug")
    assert js["formatters"]["access"]["()"] == "api.observability.JsonFormatter"
    assert js["loggers"]["uvicorn.access"]["level"] == "DEBUG"


def test_the_log_handler_writes_to_the_current_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    handler = StderrHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.emit(logging.makeLogRecord({"msg": "first", "levelno": logging.INFO}))
    assert capsys.readouterr().err == "first\n"
    handler.stream = io.StringIO()  # what logging.config may try: it stays sys.stderr
    handler.emit(logging.makeLogRecord({"msg": "second", "levelno": logging.INFO}))
    assert capsys.readouterr().err == "second\n"


# -- traces ------------------------------------------------------------------------------
@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    assert tracing.enable(provider)
    try:
        yield exporter
    finally:
        tracing.disable()
        provider.shutdown()


def _ancestors(span: ReadableSpan, by_id: dict[int, ReadableSpan]) -> list[str]:
    names = []
    parent = span.parent
    while parent is not None and parent.span_id in by_id:
        up = by_id[parent.span_id]
        names.append(up.name)
        parent = up.parent
    return names


def test_one_request_is_one_trace_request_service_store_model(
    make_app: AppFactory, tenant: str, llm: LoopbackLLM, spans: InMemorySpanExporter
) -> None:
    llm.script(answer([fact()], usage=(100, 20)))
    app = make_app(llm_base_url=llm.base_url, llm_model="loopback", workers=0)
    with TestClient(app) as client:
        r = client.post(
            f"/v1/tenants/{tenant}/episodes",
            headers={"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
            json={
                "episode_id": "e1",
                "content": "my passport deadline is 2026-07-15",
                "occurred_at": "2026-06-01T09:00:00Z",
                "extract": "sync",
            },
        )
        assert r.status_code == 201, r.text
    finished = spans.get_finished_spans()
    by_id = {s.context.span_id: s for s in finished}
    [request] = [s for s in finished if s.name == "POST /v1/tenants/{tenant}/episodes"]
    # The caller's trace (traceparent) is joined; every span of the request is in it.
    assert f"{request.context.trace_id:032x}" == "0af7651916cd43dd8448eb211c80319c"
    assert {s.context.trace_id for s in finished} == {request.context.trace_id}
    assert request.attributes is not None
    assert request.attributes["http.response.status_code"] == 201
    assert request.attributes["sgam.request_id"] == r.headers["X-Request-ID"]
    # request → service → store query; request → … → model call.
    add = next(s for s in finished if s.name == "memory.capture")
    assert _ancestors(add, by_id) == [request.name]
    assert add.attributes is not None
    assert add.attributes["sgam.tenant"] == tenant
    store_spans = [s for s in finished if s.name in ("store.query", "store.write")]
    under_add = [s for s in store_spans if _ancestors(s, by_id)[:1] == ["memory.capture"]]
    assert under_add
    assert _ancestors(under_add[0], by_id) == ["memory.capture", request.name]
    [model] = [s for s in finished if s.name == "llm.chat"]
    assert request.name in _ancestors(model, by_id)
    assert model.attributes is not None
    assert model.attributes["gen_ai.request.model"] == "loopback"
    assert (
        model.attributes["gen_ai.usage.input_tokens"],
        model.attributes["gen_ai.usage.output_tokens"],
    ) == (100, 20)


def test_tracing_off_is_a_passthrough() -> None:
    assert not tracing.enabled()
    assert tracing.span("x", a=1).__enter__() is None

    @tracing.traced("y", args={"n": "n"})
    def double(n: int) -> int:
        return 2 * n

    assert double(4) == 8


# -- model usage -------------------------------------------------------------------------
def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_model_usage_is_stored_on_the_episode_and_totalled_for_the_admin(
    make_app: AppFactory, tenant: str, llm: LoopbackLLM
) -> None:
    llm.script(
        answer([fact()], usage=(120, 30)),
        completion("not JSON at all", usage=(80, 5)),  # a bad answer still costs tokens
    )
    app = make_app(
        llm_base_url=llm.base_url,
        llm_model="loopback",
        workers=0,
        api_keys=f"{tenant}:kt,*:root",
    )
    mine = {"Authorization": "Bearer kt"}
    with TestClient(app) as client:
        base = f"/v1/tenants/{tenant}/episodes"
        for eid in ("e1", "e2"):
            r = client.post(
                base,
                headers=mine,
                json={
                    "episode_id": eid,
                    "content": "my passport deadline is 2026-07-15",
                    "occurred_at": "2026-06-01T09:00:00Z",
                    "extract": "sync",
                },
            )
            assert r.status_code == 201, r.text
        e1 = client.get(f"{base}/e1", headers=mine).json()
        e2 = client.get(f"{base}/e2", headers=mine).json()
        assert e1["status"] == "extracted"
        assert e2["status"] == "failed"
        u1: dict[str, Any] = e1["usage"]
        assert (u1["model"], u1["prompt_tokens"], u1["completion_tokens"], u1["calls"]) == (
            "loopback",
            120,
            30,
            1,
        )
        assert u1["latency_seconds"] > 0
        assert (e2["usage"]["prompt_tokens"], e2["usage"]["completion_tokens"]) == (80, 5)

        admin = _samples(client.get("/metrics", headers={"Authorization": "Bearer root"}).text)

        def tokens(kind: str) -> float:
            key = frozenset({("tenant", tenant), ("model", "loopback"), ("kind", kind)})
            return admin[("sgam_llm_tokens_total", key)]

        assert (tokens("prompt"), tokens("completion")) == (200, 35)
        pair = frozenset({("tenant", tenant), ("model", "loopback")})
        assert admin[("sgam_llm_calls_total", pair)] == 2
        assert admin[("sgam_llm_request_duration_seconds_count", pair)] == 2
        # A tenant's key, or none, sees no tenant's series (nor which tenants exist).
        for headers in (mine, {}):
            text = client.get("/metrics", headers=headers).text
            assert "sgam_llm_tokens_total" not in text
            assert tenant not in text
        assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
