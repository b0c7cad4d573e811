"""Episodes: capture first, then the client's own deltas, then extraction (when configured)."""

from __future__ import annotations

import contextlib

from fastapi import Response

from api.deps import ContextDep, ExtractorDep, MetricsDep, ServiceDep, TenantDep
from api.routes.common import BODY_PROBLEMS, problems, tenant_router
from api.schemas import EpisodePublic, EpisodeWritten
from extraction import choose_mode, on_episode_created
from graph.errors import SgamError
from graph.model import DeleteResult, Episode, EpisodeCreate, EpisodeStatus, ExtractMode, Fact

router = tenant_router("episodes")


def _public(episode: Episode, facts: list[Fact]) -> EpisodePublic:
    return EpisodePublic.model_validate({**episode.model_dump(), "facts": facts})


def _written(episode: Episode, facts: list[Fact], *, created: bool) -> EpisodeWritten:
    return EpisodeWritten.model_validate(
        {**episode.model_dump(), "facts": facts, "created": created}
    )


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
    mode = choose_mode(service, tenant_id=tenant, body=body, extractor=extractor)
    # Queued in the same write that captures it: nothing can be lost between the two.
    status = EpisodeStatus.PENDING if mode == ExtractMode.BACKGROUND else EpisodeStatus.STORED
    episode, created = service.add_episode(tenant_id=tenant, body=body, status=status)
    if not created:  # idempotent redelivery: writes nothing
        response.status_code = 200
        facts = service.episode_facts(tenant_id=tenant, episode_id=episode.episode_id)
        return _written(episode, facts, created=False)
    written: list[Fact] = []
    try:
        if body.facts:
            deltas = [
                d.model_copy(
                    update={
                        "source_episode_id": d.source_episode_id or episode.episode_id,
                        "valid_from": d.valid_from or episode.occurred_at,
                    }
                )
                for d in body.facts
            ]
            result = service.write_facts(tenant_id=tenant, deltas=deltas)
            metrics.record_writes(result.outcomes)
            written = result.facts
        if mode == ExtractMode.SYNC:
            # Extraction failures are recorded on the episode (failed + reason, or
            # rejected candidates), never raised: the episode stays, the answer says why.
            report = on_episode_created(service, extractor, episode, mode, settings=ctx.settings)
            written += report.facts
            episode = service.get_episode(tenant_id=tenant, episode_id=episode.episode_id)
        elif mode == ExtractMode.BACKGROUND:
            on_episode_created(service, extractor, episode, mode, settings=ctx.settings)
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
    summary="An episode, its status and the facts it sourced",
)
def get_episode(tenant: TenantDep, episode_id: str, service: ServiceDep) -> EpisodePublic:
    episode = service.get_episode(tenant_id=tenant, episode_id=episode_id)
    facts = service.episode_facts(tenant_id=tenant, episode_id=episode_id)
    return _public(episode, facts)


@router.delete(
    "/{episode_id}",
    response_model=DeleteResult,
    summary="Delete an episode and what only it asserted; repair the intervals it cut",
)
def delete_episode(tenant: TenantDep, episode_id: str, service: ServiceDep) -> DeleteResult:
    return service.delete_episode(tenant_id=tenant, episode_id=episode_id)
