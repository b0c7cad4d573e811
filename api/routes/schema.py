"""The tenant's memory schema: read it, or store a new version of it.

A schema's validation grows with its size (hundreds of predicates, their event
mappings), so ``PUT`` takes the raw body and parses and validates it in the route, which
FastAPI runs in its threadpool: no part of it runs on the event loop. The OpenAPI
document still declares the body as a ``MemorySchema``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError as PydanticValidationError

from api.deps import ServiceDep, TenantDep
from api.limits import json_media_type
from api.routes.common import BODY_PROBLEMS, tenant_router
from extraction import parse_mappings
from graph.schema import (
    MAX_ENTITY_TYPES,
    MAX_EVENT_MAPPINGS,
    MAX_PREDICATES,
    MAX_SUBJECT_TYPES,
    MemorySchema,
)

router = tenant_router("schema")

LIMITS = (
    f"At most {MAX_PREDICATES} predicates, {MAX_ENTITY_TYPES} entity types, "
    f"{MAX_EVENT_MAPPINGS} event mappings and {MAX_SUBJECT_TYPES} subject types per "
    "predicate; more is a 422 naming the limit."
)


async def raw_body(request: Request) -> bytes:
    body = await request.body()  # already read (and size-checked) by the body middleware
    # The body middleware checks JSON bodies only (NaN, 64-bit integers, surrogates,
    # depth); a body sent as another type would reach the parser unchecked, so it is
    # refused as FastAPI refuses one for a declared body.
    if body.strip() and not json_media_type(
        request.headers.get("content-type", "").encode("latin-1")
    ):
        raise RequestValidationError([NOT_JSON])
    return body


NOT_JSON: dict[str, Any] = {
    "type": "model_attributes_type",
    "loc": ("body",),
    "msg": "the body must be JSON, sent with content-type: application/json",
    "input": None,
}

RawBody = Annotated[bytes, Depends(raw_body)]


def parse_schema(body: bytes) -> MemorySchema:
    """The body as a schema, or the same 400/422 FastAPI gives for a declared body."""
    if not body.strip():
        raise RequestValidationError(
            [{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}]
        )
    try:
        return MemorySchema.model_validate_json(body)
    except PydanticValidationError as e:
        errors: list[dict[str, Any]] = [
            {**err, "loc": ("body", *err["loc"])} for err in e.errors(include_input=False)
        ]
        raise RequestValidationError(errors) from None


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
    description=LIMITS,
    responses=BODY_PROBLEMS,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/MemorySchema"}}
            },
        }
    },
)
def put_schema(tenant: TenantDep, body: RawBody, service: ServiceDep) -> MemorySchema:
    schema = parse_schema(body)  # in the threadpool: this route is a plain def
    parse_mappings(schema)  # a bad event mapping is a 422 now, not a failed episode later
    return service.put_schema(tenant_id=tenant, schema=schema)
