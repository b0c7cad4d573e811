"""Extraction review: retry an episode, decide held candidates, review merge candidates."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query
from pydantic import BaseModel, ConfigDict, Field

from api.deps import ExtractorDep, ServiceDep, TenantDep
from api.routes.common import TENANT_PROBLEMS, problems
from extraction import confirm_candidate, decide_merge_candidate, reject_candidate, retry_episode
from graph.errors import NotFoundError
from graph.model import Episode, Fact
from graph.queue import CandidateStatus, MergeCandidate, MergeStatus, PendingCandidate

router = APIRouter(prefix="/v1/tenants/{tenant}", tags=["extraction"], responses=TENANT_PROBLEMS)

Limit = Annotated[int, Query(ge=1, le=1000, description="At most this many, oldest first")]


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    note: str | None = Field(default=None, max_length=2000)


class CandidatesPublic(BaseModel):
    candidates: list[PendingCandidate]


class CandidateConfirmed(BaseModel):
    candidate: PendingCandidate
    facts: list[Fact]


class MergeCandidatesPublic(BaseModel):
    merge_candidates: list[MergeCandidate]


@router.post(
    "/episodes/{episode_id}/retry",
    status_code=202,
    response_model=Episode,
    summary="Queue a failed (or stored, or extracted) episode for extraction again",
    responses=problems(409),
)
def retry(
    tenant: TenantDep, episode_id: str, service: ServiceDep, extractor: ExtractorDep
) -> Episode:
    return retry_episode(
        service, tenant_id=tenant, episode_id=episode_id, model=extractor is not None
    )


@router.get(
    "/candidates",
    response_model=CandidatesPublic,
    summary="Candidates held by the schema's policy (confirmation, minimum support)",
)
def list_candidates(
    tenant: TenantDep,
    service: ServiceDep,
    status: CandidateStatus | None = CandidateStatus.PENDING,
    episode_id: str | None = None,
    limit: Limit = 100,
) -> CandidatesPublic:
    found = service.store.queue.candidates(
        tenant_id=tenant, status=status, episode_id=episode_id, limit=limit
    )
    return CandidatesPublic(candidates=found)


@router.get("/candidates/{candidate_id}", response_model=PendingCandidate)
def get_candidate(tenant: TenantDep, candidate_id: str, service: ServiceDep) -> PendingCandidate:
    found = service.store.queue.candidate(tenant_id=tenant, candidate_id=candidate_id)
    if found is None:
        raise NotFoundError("candidate", candidate_id)
    return found


@router.post(
    "/candidates/{candidate_id}/confirm",
    response_model=CandidateConfirmed,
    summary="Write a pending candidate through the ledger",
    responses=problems(409),
)
def confirm(
    tenant: TenantDep,
    candidate_id: str,
    service: ServiceDep,
    body: Annotated[Decision | None, Body()] = None,
) -> CandidateConfirmed:
    candidate, facts = confirm_candidate(
        service, tenant_id=tenant, candidate_id=candidate_id, note=body.note if body else None
    )
    return CandidateConfirmed(candidate=candidate, facts=facts)


@router.post(
    "/candidates/{candidate_id}/reject",
    response_model=PendingCandidate,
    summary="Refuse a pending candidate; it is kept, marked rejected, never written",
    responses=problems(409),
)
def reject(
    tenant: TenantDep,
    candidate_id: str,
    service: ServiceDep,
    body: Annotated[Decision | None, Body()] = None,
) -> PendingCandidate:
    return reject_candidate(
        service, tenant_id=tenant, candidate_id=candidate_id, note=body.note if body else None
    )


@router.get(
    "/merge-candidates",
    response_model=MergeCandidatesPublic,
    summary="Entities whose names look like duplicates of existing ones, for review",
)
def list_merge_candidates(
    tenant: TenantDep,
    service: ServiceDep,
    status: MergeStatus | None = MergeStatus.OPEN,
    limit: Limit = 100,
) -> MergeCandidatesPublic:
    found = service.store.queue.merge_candidates(tenant_id=tenant, status=status, limit=limit)
    return MergeCandidatesPublic(merge_candidates=found)


@router.post(
    "/merge-candidates/{candidate_id}/accept",
    response_model=MergeCandidate,
    summary="Record the name as an alias of the existing entity (later mentions resolve to it)",
    responses=problems(409),
)
def accept_merge(tenant: TenantDep, candidate_id: str, service: ServiceDep) -> MergeCandidate:
    return decide_merge_candidate(service, tenant_id=tenant, candidate_id=candidate_id, accept=True)


@router.post(
    "/merge-candidates/{candidate_id}/dismiss",
    response_model=MergeCandidate,
    summary="Keep the two entities apart",
    responses=problems(409),
)
def dismiss_merge(tenant: TenantDep, candidate_id: str, service: ServiceDep) -> MergeCandidate:
    return decide_merge_candidate(
        service, tenant_id=tenant, candidate_id=candidate_id, accept=False
    )
