"""Erasure: forget one entity for good, or a whole tenant (admin key only).

Both really delete (no tombstones): afterwards no read, search, export or list returns
the entity's id or its values. The work runs in a worker thread (these are sync routes),
never on the event loop.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Request
from pydantic import BaseModel, ConfigDict, StrictBool

from api.auth import PRINCIPAL_SCOPE_KEY, Principal
from api.deps import StoreDep, TenantDep
from api.problems import ForbiddenError
from api.routes.common import TENANT_PROBLEMS, problems
from graph.erasure import ForgetResult, erasable, forget
from graph.port import Store

router = APIRouter(prefix="/v1/tenants/{tenant}", tags=["erasure"], responses=TENANT_PROBLEMS)


class ForgetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Strict: "no", "0" or 0 is a 422, never read as false (which would really erase).
    dry_run: StrictBool = False


class TenantErased(BaseModel):
    tenant_id: str
    erased: bool


def forget_entity(
    tenant: str, entity_id: str, store: Store, body: ForgetRequest | None = None
) -> ForgetResult:
    return forget(
        erasable(store),
        tenant_id=tenant,
        entity_id=entity_id,
        dry_run=body.dry_run if body else False,
    )


@router.post(
    "/entities/{entity_id}/forget",
    response_model=ForgetResult,
    summary="Erase an entity, every fact about it and every episode that mentions it",
)
def forget_route(
    tenant: TenantDep,
    entity_id: str,
    store: StoreDep,
    body: Annotated[ForgetRequest | None, Body()] = None,
) -> ForgetResult:
    return forget_entity(tenant, entity_id, store, body)


def erase_tenant(tenant: str, store: Store, principal: Principal) -> TenantErased:
    if not principal.admin:
        raise ForbiddenError("erasing a tenant needs the admin key (tenant '*')")
    store.purge_tenant(tenant_id=tenant)
    return TenantErased(tenant_id=tenant, erased=True)


@router.delete(
    "",
    response_model=TenantErased,
    summary="Erase a whole tenant: every entity, fact, episode, schema, candidate and index entry",
    responses=problems(403),
)
def delete_tenant(tenant: TenantDep, store: StoreDep, request: Request) -> TenantErased:
    principal = request.scope.get(PRINCIPAL_SCOPE_KEY)
    if not isinstance(principal, Principal):  # the tenant gate sets it; never assume admin
        raise ForbiddenError("erasing a tenant needs the admin key (tenant '*')")
    return erase_tenant(tenant, store, principal)


__all__ = ["ForgetRequest", "TenantErased", "erase_tenant", "forget_entity", "router"]
