"""Facts: batch writes, retraction, state reads (paged) and a timeline's history."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import Body, Query

from api.cursors import next_cursor, resume
from api.deps import MetricsDep, ServiceDep, TenantDep
from api.routes.common import BODY_PROBLEMS, AsOf, CursorParam, KnownAt, problems, tenant_router
from api.schemas import FactHistory, FactRetract, FactsCreate, FactsPublic
from graph.model import Fact, WriteResult
from graph.service import MAX_LIMIT, MemoryService
from graph.timeutil import format_instant, parse_instant

router = tenant_router("facts")


# -- writes ----------------------------------------------------------------------------
@router.post(
    "",
    status_code=201,
    response_model=WriteResult,
    summary="Write a batch of facts in one transaction",
    responses={**problems(409), **BODY_PROBLEMS},
)
def write_facts(
    tenant: TenantDep, body: FactsCreate, service: ServiceDep, metrics: MetricsDep
) -> WriteResult:
    result = service.write_facts(tenant_id=tenant, deltas=body.facts, policy=body.conflict_policy)
    metrics.record_writes(result.outcomes)
    return result


@router.post(
    "/{fact_id}/retract",
    response_model=Fact,
    summary="End a fact's validity at valid_to (default now) without a replacement",
    responses=BODY_PROBLEMS,
)
def retract_fact(
    tenant: TenantDep,
    fact_id: str,
    service: ServiceDep,
    body: Annotated[FactRetract | None, Body()] = None,
) -> Fact:
    valid_to = body.valid_to if body is not None else None
    return service.retract(tenant_id=tenant, fact_id=fact_id, valid_to=valid_to)


# -- reads -----------------------------------------------------------------------------
@router.get(
    "",
    response_model=FactsPublic,
    summary="Facts valid at as_of as known at known_at, paged by an opaque cursor",
)
def read_facts(
    tenant: TenantDep,
    service: ServiceDep,
    subject: str | None = None,
    predicate: str | None = None,
    object: str | None = None,
    memory_type: str | None = None,
    as_of: AsOf = None,
    known_at: KnownAt = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 100,
    cursor: CursorParam = None,
) -> FactsPublic:
    return facts_page(
        service,
        tenant_id=tenant,
        subject=subject,
        predicate=predicate,
        object=object,
        memory_type=memory_type,
        as_of=as_of,
        known_at=known_at,
        limit=limit,
        cursor=cursor,
    )


def facts_page(
    service: MemoryService,
    *,
    tenant_id: str,
    subject: str | None,
    predicate: str | None,
    object: str | None,
    memory_type: str | None,
    as_of: datetime | None,
    known_at: datetime | None,
    limit: int,
    cursor: str | None,
) -> FactsPublic:
    """One page of a state read, and the cursor of the next (REST and MCP both call it)."""
    tenant = tenant_id
    filters: dict[str, str | None] = {
        "subject": subject,
        "predicate": predicate,
        "object": object,
        "memory_type": memory_type,
    }
    at = resume(
        cursor,
        tenant=tenant,
        kind="facts",
        filters=filters,
        as_of=as_of,
        known_at=known_at,
        parts=3,
    )
    after = (at.after[0], at.after[1], at.after[2]) if at.after else None
    fetch = min(limit + 1, MAX_LIMIT)
    rows = service.facts(
        tenant_id=tenant,
        subject=subject,
        predicate=predicate,
        object=object,
        memory_type=memory_type,
        as_of=at.as_of,
        known_at=at.known_at,
        limit=fetch,
        after=after,
    )
    more = len(rows) > limit or (len(rows) == limit == fetch)
    page = rows[:limit]
    nxt: str | None = None
    if more and page:
        last = page[-1]
        nxt = next_cursor(
            (last.subject, last.predicate, last.fact_id),
            position=at,
            tenant=tenant,
            kind="facts",
            filters=filters,
        )
    return FactsPublic(facts=page, next_cursor=nxt)


@router.get(
    "/history",
    response_model=FactHistory,
    summary="Every version of one timeline as known at known_at, by valid_from, paged",
)
def fact_history(
    tenant: TenantDep,
    service: ServiceDep,
    subject: str,
    predicate: str,
    object: str | None = None,
    known_at: KnownAt = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Versions per page")] = MAX_LIMIT,
    cursor: CursorParam = None,
) -> FactHistory:
    return history_page(
        service,
        tenant_id=tenant,
        subject=subject,
        predicate=predicate,
        object=object,
        known_at=known_at,
        limit=limit,
        cursor=cursor,
    )


def history_page(
    service: MemoryService,
    *,
    tenant_id: str,
    subject: str,
    predicate: str,
    object: str | None,
    known_at: datetime | None,
    limit: int,
    cursor: str | None,
) -> FactHistory:
    """One page of a timeline, and the cursor of the next (REST and MCP both call it)."""
    tenant = tenant_id
    filters: dict[str, str | None] = {
        "subject": subject,
        "predicate": predicate,
        "object": object,
    }
    at = resume(
        cursor,
        tenant=tenant,
        kind="history",
        filters=filters,
        as_of=None,
        known_at=known_at,
        parts=2,
        pin_as_of=False,
    )
    after = None
    if at.after is not None:
        after = (parse_instant(at.after[0], field="cursor"), at.after[1])
    rows = service.history(
        tenant_id=tenant,
        subject=subject,
        predicate=predicate,
        object=object,
        known_at=at.known_at,
        limit=limit + 1,
        after=after,
    )
    page = rows[:limit]
    nxt: str | None = None
    if len(rows) > limit:
        last = page[-1]
        keyset = (format_instant(last.valid_from), last.fact_id)
        nxt = next_cursor(keyset, position=at, tenant=tenant, kind="history", filters=filters)
    return FactHistory(facts=page, next_cursor=nxt)
