"""What the routers share: problem responses in OpenAPI, time query parameters, the
tenant router's shape, and the check that a single-valued query parameter comes once."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from fastapi import APIRouter, Query, Request
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

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


# -- repeated query parameters ---------------------------------------------------------
REPEATED = "this parameter takes one value"
_LISTS = (list, tuple, set, frozenset, Sequence)


def _is_list(annotation: Any) -> bool:
    """Whether a parameter's type takes many values (``list[str] | None`` does)."""
    origin = get_origin(annotation)
    if origin is Union or origin is UnionType:
        return any(_is_list(a) for a in get_args(annotation))
    if origin is Annotated:
        return _is_list(get_args(annotation)[0])
    return origin in _LISTS or annotation in _LISTS


def _query_fields(dependant: Dependant) -> Iterator[tuple[str, bool]]:
    """(name, takes many) of every query parameter of a route, its dependencies' too."""
    for field in dependant.query_params:
        yield field.alias, _is_list(field.field_info.annotation)
    for sub in dependant.dependencies:
        yield from _query_fields(sub)


async def single_valued_query(request: Request) -> None:
    """A single-valued query parameter sent more than once is a 422 naming it: FastAPI
    would read one of the values and drop the others silently. Parameters declared as
    lists (``predicates`` of neighbors) may repeat. Installed on the app, so it runs
    before every route (and before anything it writes)."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute) or not request.query_params:
        return
    errors = [
        {
            "type": "repeated_parameter",
            "loc": ("query", name),
            "msg": f"given {count} times: {REPEATED}",
            "input": None,
        }
        for name, many in _query_fields(route.dependant)
        if not many and (count := len(request.query_params.getlist(name))) > 1
    ]
    if errors:
        raise RequestValidationError(errors)
