"""What the routers share: problem responses in OpenAPI, time query parameters, and the
tenant router's shape."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from api.schemas import Instant, Problem

PROBLEM_DESCRIPTIONS: dict[int, str] = {
    400: "Malformed request (e.g. a body that is not JSON)",
    401: "No API key, or an unknown one",
    403: "The operation needs the admin key",
    404: "Unknown resource, or a tenant the key may not see",
    409: "Conflict with recorded state",
    413: "Request body too large",
    422: "Invalid input: `errors` lists each failing item, field and reason",
    503: "Store unavailable; retry after `Retry-After` seconds",
}


AsOf = Annotated[
    Instant | None,
    Query(description="Valid time (RFC 3339 with an offset); default now"),
]
KnownAt = Annotated[
    Instant | None,
    Query(description="System time: what the service believed then (RFC 3339); default now"),
]
CursorParam = Annotated[
    str | None,
    Query(max_length=4096, description="next_cursor of the previous page"),
]


def problems(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI responses for these problem statuses (served as application/problem+json)."""
    return {c: {"model": Problem, "description": PROBLEM_DESCRIPTIONS[c]} for c in codes}


# Every tenant route can answer these.
TENANT_PROBLEMS = problems(401, 404, 422, 503)
BODY_PROBLEMS = problems(400, 413)


def tenant_router(resource: str) -> APIRouter:
    return APIRouter(
        prefix=f"/v1/tenants/{{tenant}}/{resource}", tags=[resource], responses=TENANT_PROBLEMS
    )
