"""Policy after the model: which validated candidates are written now and which wait.

Per predicate the schema may say
- ``requires_confirmation``: the candidate waits as *pending* until confirmed (or
  rejected) through the API;
- ``min_support: N``: a weak signal (say a preference) becomes a fact only once N
  distinct episodes support the same statement, or when someone confirms it.

Supersession is never decided here: whatever is written goes through the ledger's
temporal core like any other write.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from graph.model import MemoryDelta, canonical_value, new_id
from graph.queue import HoldReason, PendingCandidate, QueueStore
from graph.schema import MemorySchema


def statement_key(d: MemoryDelta) -> str:
    """What supporting episodes must agree on: subject, predicate, value or object."""
    what = f"@{d.object}" if d.object is not None else f"={canonical_value(d.value)}"
    return json.dumps([d.subject, d.predicate, what], separators=(",", ":"))


def hold_reason(schema: MemorySchema, d: MemoryDelta) -> tuple[HoldReason, int] | None:
    spec = schema.predicate(d.predicate)
    if spec is None:
        return None
    if spec.requires_confirmation:
        return HoldReason.CONFIRMATION, spec.min_support
    if spec.min_support > 1:
        return HoldReason.SUPPORT, spec.min_support
    return None


@dataclass
class PolicyOutcome:
    write: list[MemoryDelta] = field(default_factory=list)
    # Held candidates released by reaching their support, and written with ``write``.
    promoted: list[PendingCandidate] = field(default_factory=list)
    pending: list[PendingCandidate] = field(default_factory=list)


def apply_policy(
    queue: QueueStore,
    schema: MemorySchema,
    *,
    tenant_id: str,
    episode_id: str,
    deltas: Sequence[MemoryDelta],
    now: datetime,
) -> PolicyOutcome:
    """Split complete deltas (source and valid_from set) into written and held ones.

    A statement that reaches its support is written once: promotion atomically flips its
    pending candidates, so of two workers crossing the threshold together only one gets
    them. All supporters are written at the valid time of the one that tipped it — the
    moment the signal became a fact — so the first creates the fact and the others add
    themselves as its sources.
    """
    out = PolicyOutcome()
    for d in deltas:
        held = hold_reason(schema, d)
        if held is None:
            out.write.append(d)
            continue
        reason, needed = held
        key = statement_key(d)
        candidate = PendingCandidate(
            tenant_id=tenant_id,
            candidate_id=new_id("pc"),
            episode_id=episode_id,
            statement_key=key,
            reason=reason,
            delta=d,
            created_at=now,
        )
        stored, support = queue.hold_candidate(candidate=candidate)
        if reason == HoldReason.SUPPORT and support >= needed:
            released = queue.promote_candidates(tenant_id=tenant_id, statement_key=key, now=now)
            # The tipping episode first: it becomes the fact's source_episode_id.
            released.sort(key=lambda k: k.episode_id != episode_id)
            for k in released:
                out.write.append(_at(k.delta, d))
            out.promoted += released
        else:
            out.pending.append(stored)
    return out


def _at(supporter: MemoryDelta, tipping: MemoryDelta) -> MemoryDelta:
    """The supporter moved to the tipping valid time (unless it ends before that)."""
    start = tipping.valid_from
    if start is None or (supporter.valid_to is not None and supporter.valid_to <= start):
        return supporter
    return supporter.model_copy(update={"valid_from": start})
