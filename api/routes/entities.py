"""Entities: one entity with its facts, and the subgraph around it."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from api.deps import ServiceDep, TenantDep
from api.routes.common import AsOf, KnownAt, tenant_router
from api.schemas import EntityPredicates, EntityPublic
from graph.model import PREDICATE_RE, Direction, Neighborhood
from graph.service import MAX_DEPTH, MAX_LIMIT

router = tenant_router("entities")


@router.get(
    "/{entity_id}",
    response_model=EntityPublic,
    summary="The entity and its facts (as subject or object) valid at as_of",
)
def get_entity(
    tenant: TenantDep,
    entity_id: str,
    service: ServiceDep,
    as_of: AsOf = None,
    known_at: KnownAt = None,
) -> EntityPublic:
    entity, facts = service.entity(
        tenant_id=tenant, entity_id=entity_id, as_of=as_of, known_at=known_at
    )
    return EntityPublic.model_validate({**entity.model_dump(), "facts": facts})


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
