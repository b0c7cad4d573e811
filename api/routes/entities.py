"""Entities: one entity with its facts, and the subgraph around it."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from api.cursors import next_cursor, resume
from api.deps import ServiceDep, TenantDep
from api.routes.common import AsOf, CursorParam, KnownAt, tenant_router
from api.schemas import EntityPredicates, EntityPublic
from graph.errors import invalid
from graph.model import PREDICATE_RE, Direction, Neighborhood
from graph.service import MAX_DEPTH, MAX_LIMIT, MAX_NEIGHBORHOOD

router = tenant_router("entities")


@router.get(
    "/{entity_id}",
    response_model=EntityPublic,
    summary="The entity and its facts (as subject, then object) valid at as_of, paged",
)
def get_entity(
    tenant: TenantDep,
    entity_id: str,
    service: ServiceDep,
    as_of: AsOf = None,
    known_at: KnownAt = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Facts per page")] = MAX_LIMIT,
    cursor: CursorParam = None,
) -> EntityPublic:
    filters: dict[str, str | None] = {"entity": entity_id}
    # The keyset: (phase, subject, predicate, fact_id); "in" with empty parts starts the
    # facts the entity is the object of.
    at = resume(
        cursor,
        tenant=tenant,
        kind="entity",
        filters=filters,
        as_of=as_of,
        known_at=known_at,
        parts=4,
    )
    incoming, after = False, None
    if at.after is not None:
        phase, subject, predicate, fact_id = at.after
        if phase not in ("out", "in"):
            raise invalid("not a cursor returned by this API", field="cursor")
        incoming = phase == "in"
        after = (subject, predicate, fact_id) if fact_id else None
    assert at.as_of is not None
    page = service.entity_page(
        tenant_id=tenant,
        entity_id=entity_id,
        as_of=at.as_of,
        known_at=at.known_at,
        limit=limit,
        incoming=incoming,
        after=after,
    )
    nxt = None
    if page.next is not None:
        more_incoming, last = page.next
        keyset = ("in" if more_incoming else "out", *(last or ("", "", "")))
        nxt = next_cursor(keyset, position=at, tenant=tenant, kind="entity", filters=filters)
    return EntityPublic.model_validate(
        {**page.entity.model_dump(), "facts": page.facts, "next_cursor": nxt}
    )


@router.get(
    "/{entity_id}/neighbors",
    response_model=Neighborhood,
    summary="The subgraph reachable in depth hops over facts valid at as_of",
)
def get_neighbors(
    tenant: TenantDep,
    entity_id: str,
    service: ServiceDep,
    depth: Annotated[int, Query(ge=1, le=MAX_DEPTH)] = 1,
    predicates: Annotated[
        list[str] | None,
        Query(description="Only these predicates (repeat the parameter or separate by commas)"),
    ] = None,
    direction: Direction = Direction.BOTH,
    as_of: AsOf = None,
    known_at: KnownAt = None,
    limit: Annotated[
        int,
        Query(
            ge=1,
            le=MAX_NEIGHBORHOOD,
            description="At most this many facts; a larger neighbourhood is a 422",
        ),
    ] = MAX_NEIGHBORHOOD,
) -> Neighborhood:
    names = [p.strip() for raw in predicates or [] for p in raw.split(",") if p.strip()]
    return service.neighbors(
        tenant_id=tenant,
        entity_id=entity_id,
        depth=depth,
        predicates=names or None,
        direction=direction,
        as_of=as_of,
        known_at=known_at,
        limit=limit,
    )


@router.get(
    "/{entity_id}/predicates",
    response_model=EntityPredicates,
    summary="The predicates the entity has had facts for at any valid time, as known at known_at",
)
def get_predicates(
    tenant: TenantDep,
    entity_id: str,
    service: ServiceDep,
    known_at: KnownAt = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 100,
    cursor: Annotated[
        str | None,
        Query(pattern=PREDICATE_RE, description="next_cursor of the previous page"),
    ] = None,
) -> EntityPredicates:
    # GET /entities/{id} lists only what is valid at one as_of; a timeline view also
    # needs the timelines that are not valid then.
    page, more = service.predicates(
        tenant_id=tenant, subject=entity_id, known_at=known_at, limit=limit, after=cursor
    )
    return EntityPredicates(predicates=page, next_cursor=page[-1] if more else None)
