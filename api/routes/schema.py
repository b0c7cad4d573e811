"""The tenant's memory schema: read it, or store a new version of it."""

from __future__ import annotations

from api.deps import ServiceDep, TenantDep
from api.routes.common import BODY_PROBLEMS, tenant_router
from extraction import parse_mappings
from graph.schema import MemorySchema

router = tenant_router("schema")


@router.get(
    "",
    response_model=MemorySchema,
    summary="The tenant's memory schema (the permissive default, version 0, until one is put)",
)
def get_schema(tenant: TenantDep, service: ServiceDep) -> MemorySchema:
    return service.schema(tenant_id=tenant)


@router.put(
    "",
    response_model=MemorySchema,
    summary="Store a new schema; the server assigns the next version",
    responses=BODY_PROBLEMS,
)
def put_schema(tenant: TenantDep, body: MemorySchema, service: ServiceDep) -> MemorySchema:
    parse_mappings(body)  # a bad event mapping is a 422 now, not a failed episode later
    return service.put_schema(tenant_id=tenant, schema=body)
