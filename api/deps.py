"""Typed dependencies of the routes, as ``Annotated`` aliases.

Routes → dependencies → :class:`~graph.service.MemoryService` → store. Everything a
route needs hangs off one :class:`AppContext`, built by :func:`api.app.create_app`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.auth import PRINCIPAL_SCOPE_KEY, KeyRing, Principal, authorize
from api.metrics import Metrics
from api.settings import Settings
from extraction import Extractor
from graph.errors import NotFoundError
from graph.model import TENANT_RE
from graph.port import Store
from graph.service import MemoryService


@dataclass(frozen=True)
class AppContext:
    settings: Settings
    store: Store
    service: MemoryService
    metrics: Metrics
    keyring: KeyRing
    # The model extractor (SGAM_LLM_*); None without one (event mappings still work).
    extractor: Extractor | None = None


def get_context(request: Request) -> AppContext:
    ctx = getattr(request.app.state, "ctx", None)
    if not isinstance(ctx, AppContext):
        raise RuntimeError("the app was not built by api.app.create_app")
    return ctx


ContextDep = Annotated[AppContext, Depends(get_context)]


def get_service(ctx: ContextDep) -> MemoryService:
    return ctx.service


def get_store(ctx: ContextDep) -> Store:
    return ctx.store


def get_metrics(ctx: ContextDep) -> Metrics:
    return ctx.metrics


def get_extractor(ctx: ContextDep) -> Extractor | None:
    return ctx.extractor


ServiceDep = Annotated[MemoryService, Depends(get_service)]
StoreDep = Annotated[Store, Depends(get_store)]
MetricsDep = Annotated[Metrics, Depends(get_metrics)]
ExtractorDep = Annotated[Extractor | None, Depends(get_extractor)]

# Declares the Bearer scheme in OpenAPI (the "Authorize" button of /docs); the check
# itself is done by api.auth.TenantGate before routing.
bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <key>")


def get_tenant(
    request: Request,
    tenant: Annotated[
        str,
        Path(pattern=TENANT_RE, description="Tenant id; a foreign tenant answers 404."),
    ],
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> str:
    """The path's tenant, once more checked against the caller (defence in depth)."""
    principal = request.scope.get(PRINCIPAL_SCOPE_KEY)
    if not isinstance(principal, Principal):
        raise NotFoundError("tenant", tenant)
    authorize(principal, tenant)
    return tenant


TenantDep = Annotated[str, Depends(get_tenant)]
