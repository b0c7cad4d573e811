"""Prometheus metrics, one registry per app (tests build many apps in one process).

Labels are bounded: the route *template* (``/v1/tenants/{tenant}/facts``), never the raw
path, so no tenant id or other request data reaches what ``/metrics`` shows everyone.

Model usage is totalled per tenant and model (``sgam_llm_tokens_total{tenant,model,kind}``,
``sgam_llm_request_duration_seconds{tenant,model}``, ``sgam_llm_calls_total{tenant,model}``)
in a second registry, rendered only for the admin key (or on an open server, which is
loopback-only): a tenant's key, or no key, never learns which other tenants exist.
"""

from __future__ import annotations

import collections
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from extraction import ExtractionError, ExtractionRequest, Extractor, Proposal
from graph.model import ModelUsage, WriteStatus
from graph.retrieval.indexer import KindLag

log = logging.getLogger(__name__)

UNMATCHED = "<unmatched>"
LATENCY_BUCKETS = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
LLM_LATENCY_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)
METRICS_CONTENT_TYPE = CONTENT_TYPE_LATEST
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        labels = ("method", "route", "status")
        self.requests = Counter(
            "sgam_http_requests", "HTTP requests answered", labels, registry=self.registry
        )
        self.latency = Histogram(
            "sgam_http_request_duration_seconds",
            "Time to answer an HTTP request",
            labels,
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.facts_written = Counter(
            "sgam_facts_written",
            "Fact items written, by outcome (created, unchanged, corroborated, kept_existing)",
            ("outcome",),
            registry=self.registry,
        )
        self.conflicts = Counter(
            "sgam_conflicts", "Writes refused with 409", ("kind",), registry=self.registry
        )
        self.store_errors = Counter(
            "sgam_store_errors",
            "Requests the store could not answer",
            ("kind",),
            registry=self.registry,
        )

        # Per tenant: served to the admin key only (see the module docstring).
        self.tenant_registry = CollectorRegistry(auto_describe=True)
        self.llm_tokens = Counter(
            "sgam_llm_tokens",
            "Model tokens spent on extraction, as the endpoint's usage reported them",
            ("tenant", "model", "kind"),
            registry=self.tenant_registry,
        )
        self.llm_calls = Counter(
            "sgam_llm_calls",
            "Model completions received for extraction",
            ("tenant", "model"),
            registry=self.tenant_registry,
        )
        self.llm_latency = Histogram(
            "sgam_llm_request_duration_seconds",
            "Time one extraction waited for the model (retries included)",
            ("tenant", "model"),
            buckets=LLM_LATENCY_BUCKETS,
            registry=self.tenant_registry,
        )

    def watch_index(self, lag: Callable[[], Mapping[str, KindLag]]) -> None:
        """Report the index lag (per kind, over all tenants) at each scrape."""
        self.registry.register(_IndexLagCollector(lag))

    def record_writes(self, outcomes: Iterable[WriteStatus]) -> None:
        # One increment per outcome, not per item: a label lookup and a locked increment
        # per fact cost ~2 ms per 1,000-fact batch.
        for outcome, n in collections.Counter(o.value for o in outcomes).items():
            self.facts_written.labels(outcome=outcome).inc(n)

    def record_usage(self, tenant_id: str, usage: ModelUsage | None) -> None:
        if usage is None:
            return
        self.llm_tokens.labels(tenant_id, usage.model, "prompt").inc(usage.prompt_tokens)
        self.llm_tokens.labels(tenant_id, usage.model, "completion").inc(usage.completion_tokens)
        self.llm_calls.labels(tenant_id, usage.model).inc(usage.calls)
        self.llm_latency.labels(tenant_id, usage.model).observe(usage.latency_seconds)

    def render(self, *, tenants: bool = False) -> bytes:
        """Prometheus text; with ``tenants``, the per-tenant series too (admin only)."""
        text = generate_latest(self.registry)
        return text + generate_latest(self.tenant_registry) if tenants else text


class MeteredExtractor:
    """An extractor whose every model call is counted in :class:`Metrics` (the calls of
    ``extract=sync`` requests and of the server's own queue workers alike)."""

    def __init__(self, inner: Extractor, metrics: Metrics) -> None:
        self.inner = inner
        self.metrics = metrics
        self.name = inner.name
        self.wants_context = inner.wants_context

    def extract(self, request: ExtractionRequest) -> Proposal:
        tenant = request.episode.tenant_id
        try:
            proposal = self.inner.extract(request)
        except ExtractionError as e:
            self.metrics.record_usage(tenant, e.usage)  # a bad answer still cost tokens
            raise
        self.metrics.record_usage(tenant, proposal.usage)
        return proposal

    def close(self) -> None:
        self.inner.close()


class _IndexLagCollector(Collector):
    """Index lag read from the store at scrape time; labelled by kind only (no tenant)."""

    def __init__(self, lag: Callable[[], Mapping[str, KindLag]]) -> None:
        self.lag = lag

    def describe(self) -> Iterable[Metric]:
        return []  # the families are created at collect time

    def collect(self) -> Iterable[Metric]:
        pending = GaugeMetricFamily(
            "sgam_index_pending_items",
            "Items written but not yet embedded (found by fulltext and graph meanwhile)",
            labels=["kind"],
        )
        oldest = GaugeMetricFamily(
            "sgam_index_oldest_pending_seconds",
            "Age of the oldest item waiting for its embedding (0 when none waits)",
            labels=["kind"],
        )
        try:
            lag = self.lag()
        except Exception:  # a scrape during a store outage shows no lag rather than failing
            log.warning("index lag unavailable", exc_info=True)
            return []
        for kind, k in sorted(lag.items()):
            pending.add_metric([kind], float(k.pending))
            oldest.add_metric([kind], k.oldest_seconds)
        return [pending, oldest]


class RouteTemplates:
    """Finds the template of a path that was answered before routing (401, 404, 413)."""

    def __init__(self, templates: Callable[[], Iterable[str]]) -> None:
        self._source = templates
        self._compiled: list[tuple[re.Pattern[str], str]] | None = None

    def of(self, scope: Scope) -> str:
        path = getattr(scope.get("route"), "path", None)
        if isinstance(path, str):  # routed: FastAPI put the route in the scope
            return path
        if self._compiled is None:
            self._compiled = [(compile_path(t)[0], t) for t in self._source()]
        for regex, template in self._compiled:
            if regex.match(scope["path"]):
                return template
        return UNMATCHED


class MetricsMiddleware:
    """Counts and times every HTTP request by method, route template and status."""

    def __init__(
        self, app: ASGIApp, *, metrics: Metrics, templates: Callable[[], Iterable[str]]
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.templates = RouteTemplates(templates)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        start = time.perf_counter()

        async def send_and_see(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_and_see)
        finally:
            labels = {
                "method": scope["method"] if scope["method"] in METHODS else "OTHER",
                "route": self.templates.of(scope),
                "status": str(status),
            }
            self.metrics.requests.labels(**labels).inc()
            self.metrics.latency.labels(**labels).observe(time.perf_counter() - start)
