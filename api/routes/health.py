"""Probes and metrics: outside the tenant paths, carrying no tenant data."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from api.deps import ContextDep, MetricsDep, StoreDep
from api.metrics import METRICS_CONTENT_TYPE
from api.routes.common import problems
from api.schemas import Embeddings, Health, KindLag, Ready
from graph.embeddings import default_embedder
from graph.errors import SgamError, StoreUnavailableError
from graph.port import Store
from graph.retrieval import SearchableStore
from graph.retrieval.indexer import index_lag

router = APIRouter(tags=["service"])


@router.get("/healthz", response_model=Health, summary="The process is up")
def healthz() -> Health:
    return Health()


@router.get(
    "/readyz",
    response_model=Ready,
    summary="The store answers (200); the embedding model's state and the index lag",
    responses=problems(503),
)
def readyz(store: StoreDep) -> Ready:
    try:
        store.ping()
        detail = embeddings_detail(store)
    except SgamError:
        raise
    except Exception as e:  # a probe answers 503 for any store failure, never 500
        raise StoreUnavailableError(f"store ping failed: {type(e).__name__}") from e
    return Ready(embeddings=detail)


def embeddings_detail(store: Store) -> Embeddings | None:
    """The model's state and the index lag (None for a store that cannot search). Readiness
    stays the store's: a loading or missing model is reported here, not as a 503, since
    search answers meanwhile (it waits for a loading model, or runs without vectors)."""
    if not isinstance(store, SearchableStore):
        return None
    embedder = default_embedder()
    state = embedder.state
    lag = index_lag(store.search, embedder.name)
    return Embeddings(
        model=embedder.name,
        model_state=state,
        model_ready=state == "ready",
        degraded=["vector"] if state == "failed" else [],
        error=embedder.error,
        pending=sum(k.pending for k in lag.values()),
        oldest_pending_seconds=max((k.oldest_seconds for k in lag.values()), default=0.0),
        kinds={
            k: KindLag(pending=v.pending, oldest_pending_seconds=v.oldest_seconds)
            for k, v in lag.items()
        },
    )


@router.get(
    "/metrics",
    summary="Prometheus metrics (text format); per-tenant model usage for the admin key only",
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}, **problems(401)},
)
def metrics(m: MetricsDep, ctx: ContextDep, request: Request) -> Response:
    # No key: the tenant-free series. A key must be a configured one (401 otherwise); only
    # the admin key (or an open, loopback-only server) also sees the per-tenant series.
    authorization = request.headers.get("authorization")
    admin = ctx.keyring.open or (
        authorization is not None and ctx.keyring.authenticate(authorization).admin
    )
    return Response(content=m.render(tenants=admin), media_type=METRICS_CONTENT_TYPE)
