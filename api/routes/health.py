"""Probes and metrics: outside the tenant paths, carrying no tenant data."""

from __future__ import annotations

from fastapi import APIRouter, Response

from api.deps import MetricsDep, StoreDep
from api.metrics import METRICS_CONTENT_TYPE
from api.routes.common import problems
from api.schemas import Health, Ready
from graph.errors import SgamError, StoreUnavailableError

router = APIRouter(tags=["service"])


@router.get("/healthz", response_model=Health, summary="The process is up")
def healthz() -> Health:
    return Health()


@router.get(
    "/readyz",
    response_model=Ready,
    summary="The store answers",
    responses=problems(503),
)
def readyz(store: StoreDep) -> Ready:
    try:
        store.ping()
    except SgamError:
        raise
    except Exception as e:  # a probe answers 503 for any store failure, never 500
        raise StoreUnavailableError(f"store ping failed: {type(e).__name__}") from e
    return Ready()


@router.get(
    "/metrics",
    summary="Prometheus metrics (text format)",
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
)
def metrics(m: MetricsDep) -> Response:
    return Response(content=m.render(), media_type=METRICS_CONTENT_TYPE)
