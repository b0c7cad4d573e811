"""Episodes: capture first, then the client's own deltas, then extraction (when configured)."""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Annotated

from fastapi import Query, Response

from api.cursors import next_cursor, resume
from api.deps import ContextDep, ExtractorDep, MetricsDep, ServiceDep, TenantDep
from api.metrics import Metrics
from api.routes.common import BODY_PROBLEMS, CursorParam, problems, tenant_router
from api.schemas import EpisodePublic, EpisodeWritten
from extraction import (
    ExtractionSettings,
    Extractor,
    choose_mode,
    needs_model,
    on_episode_created,
)
from graph.errors import SgamError
from graph.model import DeleteResult, Episode, EpisodeCreate, EpisodeStatus, ExtractMode, Fact
from graph.service import MAX_LIMIT, MemoryService

router = tenant_router("episodes")


def _public(episode: Episode, facts: list[Fact], next_cursor: str | None) -> EpisodePublic:
    return EpisodePublic.model_validate(
        {**episode.model_dump(), "facts": facts, "next_cursor": next_cursor}
    )


def _written(
    episode: Episode, facts: list[Fact], *, created: bool, next_cursor: str | None = None
) -> EpisodeWritten:
    return EpisodeWritten.model_validate(
        {**episode.model_dump(), "facts": facts, "created": created, "next_cursor": next_cursor}
    )


def _sourced(
    service: MemoryService,
    *,
    tenant: str,
    episode_id: str,
    limit: int,
    cursor: str | None,
    known_at: datetime | None = None,
) -> tuple[list[Fact], str | None]:
    """A page of the facts an episode sourced, and the cursor of the next page."""
    filters: dict[str, str | None] = {"episode": episode_id}
    at = resume(
        cursor,
        tenant=tenant,
        kind="episode",
        filters=filters,
        as_of=None,
        known_at=known_at,
        parts=3,
        pin_as_of=False,
    )
    after = (at.after[0], at.after[1], at.after[2]) if at.after else None
    facts, more = service.episode_facts_page(
        tenant_id=tenant, episode_id=episode_id, known_at=at.known_at, limit=limit, after=after
    )
    if not (more and facts):
        return facts, None
    last = facts[-1]
    keyset = (last.subject, last.predicate, last.fact_id)
    return facts, next_cursor(keyset, position=at, tenant=tenant, kind="episode", filters=filters)


@router.post(
    "",
    status_code=201,
    response_model=EpisodeWritten,
    summary="Store an episode (and the facts the client extracted from it)",
    responses={
        200: {"model": EpisodeWritten, "description": "The same episode was already stored"},
        **problems(409),
        **BODY_PROBLEMS,
    },
)
def create_episode(
    tenant: TenantDep,
    body: EpisodeCreate,
    response: Response,
    service: ServiceDep,
    metrics: MetricsDep,
    extractor: ExtractorDep,
    ctx: ContextDep,
) -> EpisodeWritten:
    written = write_episode(
        service,
        tenant_id=tenant,
        body=body,
        metrics=metrics,
        extractor=extractor,
        settings=ctx.settings,
    )
    if not written.created:  # redelivery: nothing new beyond facts it had not stored yet
        response.status_code = 200
    return written


def write_episode(
    service: MemoryService,
    *,
    tenant_id: str,
    body: EpisodeCreate,
    metrics: Metrics,
    extractor: Extractor | None,
    settings: ExtractionSettings,
) -> EpisodeWritten:
    """Capture the episode with the client's own deltas (source: this episode) in one
    transaction, then extract as asked; a failed extraction request takes the episode back
    out. REST and MCP both call it."""
    tenant = tenant_id
    mode = choose_mode(service, tenant_id=tenant, body=body, extractor=extractor)
    # Queued in the same write that captures it: nothing can be lost between the two.
    status = EpisodeStatus.PENDING if mode == ExtractMode.BACKGROUND else EpisodeStatus.STORED
    # The episode and the facts it carries commit together: a failure leaves neither.
    queued = mode == ExtractMode.BACKGROUND
    episode, created, result = service.capture(
        tenant_id=tenant,
        body=body,
        status=status,
        # Which workers may claim it: only those with a model, unless a mapping does it.
        needs_model=needs_model(service, tenant_id=tenant, body=body) if queued else None,
    )
    metrics.record_writes(result.outcomes)
    if not created:  # redelivery: its facts were written again, unchanged where present
        facts, nxt = _sourced(
            service, tenant=tenant, episode_id=episode.episode_id, limit=MAX_LIMIT, cursor=None
        )
        return _written(episode, facts, created=False, next_cursor=nxt)
    written: list[Fact] = list(result.facts)
    try:
        if mode == ExtractMode.SYNC:
            # Extraction failures are recorded on the episode (failed + reason, or
            # rejected candidates), never raised: the episode stays, the answer says why.
            report = on_episode_created(service, extractor, episode, mode, settings=settings)
            written += report.facts
            episode = service.get_episode(tenant_id=tenant, episode_id=episode.episode_id)
        elif mode == ExtractMode.BACKGROUND:
            on_episode_created(service, extractor, episode, mode, settings=settings)
    except SgamError:
        # A failed request writes nothing: take the just-created episode back out.
        # If that fails too, the original error is still the answer.
        with contextlib.suppress(SgamError):
            service.delete_episode(tenant_id=tenant, episode_id=episode.episode_id)
        raise
    return _written(episode, written, created=True)


@router.get(
    "/{episode_id}",
    response_model=EpisodePublic,
    summary="An episode, its status and the facts it sourced (paged)",
)
def get_episode(
    tenant: TenantDep,
    episode_id: str,
    service: ServiceDep,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Facts per page")] = MAX_LIMIT,
    cursor: CursorParam = None,
) -> EpisodePublic:
    episode = service.get_episode(tenant_id=tenant, episode_id=episode_id)
    facts, nxt = _sourced(service, tenant=tenant, episode_id=episode_id, limit=limit, cursor=cursor)
    return _public(episode, facts, nxt)


@router.delete(
    "/{episode_id}",
    response_model=DeleteResult,
    summary="Delete an episode and what only it asserted; repair the intervals it cut",
)
def delete_episode(tenant: TenantDep, episode_id: str, service: ServiceDep) -> DeleteResult:
    return service.delete_episode(tenant_id=tenant, episode_id=episode_id)
