"""Review actions on what extraction held back: pending candidates and merge candidates.

Confirming a pending candidate writes it through the ledger like any write (a conflict
is refused with the ledger's reason and the candidate stays pending). Accepting a merge
candidate records the new name as an alias of the existing entity, so later mentions
resolve to it; the facts already written about the other entity are left as they are.
"""

from __future__ import annotations

from graph.errors import ConflictError, NotFoundError, SgamError
from graph.model import Fact
from graph.queue import (
    CandidateStatus,
    MergeCandidate,
    MergeStatus,
    PendingCandidate,
)
from graph.service import MemoryService
from graph.timeutil import utcnow


def _pending(service: MemoryService, tenant_id: str, candidate_id: str) -> PendingCandidate:
    found = service.store.queue.candidate(tenant_id=tenant_id, candidate_id=candidate_id)
    if found is None:
        raise NotFoundError("candidate", candidate_id)
    return found


def _not_pending(c: PendingCandidate) -> ConflictError:
    return ConflictError(
        f"candidate {c.candidate_id!r} is {c.status.value}, not pending",
        candidate_id=c.candidate_id,
        candidate_status=c.status.value,
    )


def confirm_candidate(
    service: MemoryService, *, tenant_id: str, candidate_id: str, note: str | None = None
) -> tuple[PendingCandidate, list[Fact]]:
    """Write a held candidate; return it (confirmed) and the facts written."""
    queue = service.store.queue
    c = _pending(service, tenant_id, candidate_id)
    if not queue.decide_candidate(
        tenant_id=tenant_id,
        candidate_id=candidate_id,
        status=CandidateStatus.CONFIRMED,
        now=utcnow(),
        note=note,
    ):
        raise _not_pending(_pending(service, tenant_id, candidate_id))
    try:
        result = service.write_facts(tenant_id=tenant_id, deltas=[c.delta])
    except SgamError:
        # Not written: put it back so it can be confirmed after the conflict is settled.
        queue.decide_candidate(
            tenant_id=tenant_id,
            candidate_id=candidate_id,
            status=CandidateStatus.PENDING,
            now=utcnow(),
            note=None,
            from_status=CandidateStatus.CONFIRMED,
        )
        raise
    return _pending(service, tenant_id, candidate_id), result.facts


def reject_candidate(
    service: MemoryService, *, tenant_id: str, candidate_id: str, note: str | None = None
) -> PendingCandidate:
    queue = service.store.queue
    c = _pending(service, tenant_id, candidate_id)
    if not queue.decide_candidate(
        tenant_id=tenant_id,
        candidate_id=candidate_id,
        status=CandidateStatus.REJECTED,
        now=utcnow(),
        note=note,
    ):
        raise _not_pending(c)
    return _pending(service, tenant_id, candidate_id)


def decide_merge_candidate(
    service: MemoryService, *, tenant_id: str, candidate_id: str, accept: bool
) -> MergeCandidate:
    """Accept (the name becomes an alias of the existing entity) or dismiss."""
    queue = service.store.queue
    m = queue.merge_candidate(tenant_id=tenant_id, candidate_id=candidate_id)
    if m is None:
        raise NotFoundError("merge candidate", candidate_id)
    status = MergeStatus.ACCEPTED if accept else MergeStatus.DISMISSED
    if not queue.decide_merge_candidate(
        tenant_id=tenant_id, candidate_id=candidate_id, status=status, now=utcnow()
    ):
        raise ConflictError(
            f"merge candidate {candidate_id!r} is {m.status.value}, not open",
            candidate_id=candidate_id,
            candidate_status=m.status.value,
        )
    if accept:
        queue.add_entity_alias(tenant_id=tenant_id, entity_id=m.existing_entity_id, alias=m.name)
    found = queue.merge_candidate(tenant_id=tenant_id, candidate_id=candidate_id)
    assert found is not None
    return found
