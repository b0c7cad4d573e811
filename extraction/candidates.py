"""From raw proposed facts to complete, schema-checked deltas, keeping every refusal.

Each candidate is judged alone: one bad candidate never sinks the others, and each
refusal is kept with its reason (and the candidate itself) on the episode.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from extraction.models import ANSWER_FIELDS, RejectedCandidate
from graph.errors import FactConflictError, ValidationError
from graph.model import Episode, Fact, MemoryDelta
from graph.schema import MemorySchema, check_delta
from graph.service import MemoryService

MAX_CANDIDATES = 200  # per episode; a runaway answer is cut, and the cut is recorded
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _reject(candidate: Any, reason: str, field: str | None, stage: str) -> RejectedCandidate:
    return RejectedCandidate.model_validate(
        {"candidate": candidate, "reason": reason, "field": field, "stage": stage}
    )


def to_delta(item: Any, episode: Episode) -> MemoryDelta | RejectedCandidate:
    """One proposed fact as a MemoryDelta citing the episode, or why it cannot be one."""
    if not isinstance(item, dict):
        return _reject(item, "a candidate must be a JSON object", None, "shape")
    extra = sorted(str(k) for k in set(item) - ANSWER_FIELDS)
    if extra:
        return _reject(item, f"unexpected fields {extra}", extra[0], "shape")
    data = {k: v for k, v in item.items() if v is not None}  # null: "not given"
    for key in ("valid_from", "valid_to"):
        # A bare date is a day: read it as that day's start in UTC rather than refuse it.
        if isinstance(data.get(key), str) and _DATE_ONLY.match(data[key]):
            data[key] += "T00:00:00Z"
    data["source_episode_id"] = episode.episode_id
    try:
        return MemoryDelta.model_validate(data)
    except PydanticValidationError as e:
        errs = e.errors()
        reason = "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in errs)
        field = str(errs[0]["loc"][0]) if errs and errs[0]["loc"] else None
        return _reject(item, reason, field, "validation")


def screen(
    schema: MemorySchema, episode: Episode, raw: Sequence[Any]
) -> tuple[list[MemoryDelta], list[RejectedCandidate]]:
    """Shape and schema checks; accepted deltas come back with valid_from filled in."""
    accepted: list[MemoryDelta] = []
    rejected: list[RejectedCandidate] = []
    for item in raw[MAX_CANDIDATES:]:
        rejected.append(_reject(item, f"more than {MAX_CANDIDATES} candidates", None, "shape"))
    for item in raw[:MAX_CANDIDATES]:
        d = to_delta(item, episode)
        if isinstance(d, RejectedCandidate):
            rejected.append(d)
            continue
        checked = check_delta(schema, d, index=None, default_valid_from=episode.occurred_at)
        if isinstance(checked, list):
            reason = "; ".join(e.reason for e in checked)
            rejected.append(_reject(item, reason, checked[0].field, "validation"))
            continue
        accepted.append(d.model_copy(update={"valid_from": checked.valid_from}))
    return accepted, rejected


def write_each(
    service: MemoryService,
    schema: MemorySchema,
    *,
    tenant_id: str,
    deltas: Sequence[MemoryDelta],
    lease: tuple[str, str] | None = None,
) -> tuple[list[Fact], list[RejectedCandidate]]:
    """Write the deltas in one transaction; what the ledger refuses is set aside with the
    ledger's reason and the rest written again, so every accepted candidate lands.
    ``lease`` (episode id, owner): written only while the worker holds it
    (:class:`~graph.errors.LeaseLostError` otherwise, and nothing is written)."""
    todo = list(deltas)
    rejected: list[RejectedCandidate] = []
    while todo:
        try:
            return service.write_facts(
                tenant_id=tenant_id, deltas=todo, schema=schema, lease=lease
            ).facts, rejected
        except ValidationError as e:
            bad: dict[int, list[str]] = {}
            for err in e.errors:
                bad.setdefault(err.index if err.index is not None else -1, []).append(err.reason)
            if -1 in bad:  # not tied to one item: none of them can be written
                bad = dict.fromkeys(range(len(todo)), bad[-1])
            fields = {err.index: err.field for err in e.errors}
        except FactConflictError as e:
            hit = [e.index] if e.index is not None else list(range(len(todo)))
            bad = {i: [e.detail] for i in hit}
            fields = dict.fromkeys(hit, "valid_from")
        for i in sorted(bad):
            item = todo[i].model_dump(mode="json", exclude_none=True)
            rejected.append(_reject(item, "; ".join(bad[i]), fields.get(i), "write"))
        todo = [d for i, d in enumerate(todo) if i not in bad]
    return [], rejected
