"""Facts: batch writes, retraction, state reads (paged) and a timeline's history."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from fastapi import Body, Query

from api.deps import MetricsDep, ServiceDep, TenantDep
from api.routes.common import BODY_PROBLEMS, AsOf, KnownAt, problems, tenant_router
from api.schemas import FactHistory, FactRetract, FactsCreate, FactsPublic
from graph.errors import SgamError, invalid
from graph.model import Fact, WriteResult
from graph.service import MAX_LIMIT
from graph.timeutil import format_instant, parse_instant, utcnow

router = tenant_router("facts")


# -- cursors ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Cursor:
    """Where a page ended, and the read it belongs to: ``as_of``/``known_at`` are pinned
    so every page answers the same question, and the filters must stay the same."""

    after: tuple[str, str, str]
    as_of: datetime
    known_at: datetime
    filters: dict[str, str | None]

    def encode(self) -> str:
        payload = {
            "v": 1,
            "after": list(self.after),
            "as_of": format_instant(self.as_of),
            "known_at": format_instant(self.known_at),
            "filters": self.filters,
        }
        raw = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> Cursor:
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            data = json.loads(raw)
            after = data["after"]
            filters = data["filters"]
            ok = (
                data.get("v") == 1
                and isinstance(after, list)
                and len(after) == 3
                and all(isinstance(p, str) for p in after)
                and isinstance(filters, dict)
                and all(isinstance(v, str | None) for v in filters.values())
            )
            if not ok:
                raise ValueError("unexpected cursor shape")
            return cls(
                after=(after[0], after[1], after[2]),
                as_of=parse_instant(data["as_of"], field="cursor"),
                known_at=parse_instant(data["known_at"], field="cursor"),
                filters={str(k): v for k, v in filters.items()},
            )
        except (SgamError, ValueError, KeyError, TypeError, binascii.Error, UnicodeDecodeError):
            raise invalid("not a cursor returned by this API", field="cursor") from None


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
    cursor: Annotated[str | None, Query(description="next_cursor of the previous page")] = None,
) -> FactsPublic:
    filters: dict[str, str | None] = {
        "subject": subject,
        "predicate": predicate,
        "object": object,
        "memory_type": memory_type,
    }
    after: tuple[str, str, str] | None = None
    if cursor is not None:
        c = Cursor.decode(cursor)
        if c.filters != filters:
            raise invalid("the cursor belongs to a read with other filters", field="cursor")
        for name, given, pinned in (("as_of", as_of, c.as_of), ("known_at", known_at, c.known_at)):
            if given is not None and given != pinned:
                raise invalid(
                    f"the cursor is pinned to {name}={format_instant(pinned)}", field=name
                )
        after, as_of, known_at = c.after, c.as_of, c.known_at
    now = utcnow()
    as_of = as_of or now
    known_at = known_at or now
    fetch = min(limit + 1, MAX_LIMIT)
    rows = service.facts(
        tenant_id=tenant,
        subject=subject,
        predicate=predicate,
        object=object,
        memory_type=memory_type,
        as_of=as_of,
        known_at=known_at,
        limit=fetch,
        after=after,
    )
    more = len(rows) > limit or (len(rows) == limit == fetch)
    page = rows[:limit]
    next_cursor: str | None = None
    if more and page:
        last = page[-1]
        next_cursor = Cursor(
            after=(last.subject, last.predicate, last.fact_id),
            as_of=as_of,
            known_at=known_at,
            filters=filters,
        ).encode()
    return FactsPublic(facts=page, next_cursor=next_cursor)


@router.get(
    "/history",
    response_model=FactHistory,
    summary="Every version of one timeline as known at known_at, ordered by valid_from",
)
def fact_history(
    tenant: TenantDep,
    service: ServiceDep,
    subject: str,
    predicate: str,
    object: str | None = None,
    known_at: KnownAt = None,
) -> FactHistory:
    facts = service.history(
        tenant_id=tenant,
        subject=subject,
        predicate=predicate,
        object=object,
        known_at=known_at,
    )
    return FactHistory(facts=facts)
