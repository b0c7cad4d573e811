"""The project's error tree. Every layer raises these; only the API maps them to HTTP.

SgamError
├── ValidationError        bad input; ``errors`` lists each failing item, field, reason  (422)
├── NotFoundError          unknown or foreign resource                                  (404)
├── ConflictError          a write clashes with recorded state                          (409)
│   ├── FactConflictError  equal valid_from on one timeline under the ``reject`` policy
│   └── LeaseLostError     an extraction worker no longer holds its episode's lease
├── StoreUnavailableError  the store cannot be reached or is busy; retry later          (503)
│   └── TransientStoreError  a deadlock or leader switch: the service retries the transaction
├── StoreFailedError       the store failed in a way a retry does not fix               (500)
└── TemplateError          a Cypher template is malformed (raised at start-up)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class SgamError(Exception):
    """Base of every error sgam raises on purpose."""


@dataclass(frozen=True)
class ItemError:
    """One reason an input was refused: which item (batch index), which field, why."""

    reason: str
    field: str | None = None
    index: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"reason": self.reason}
        if self.index is not None:
            out["index"] = self.index
        if self.field is not None:
            out["field"] = self.field
        return out


class ValidationError(SgamError):
    def __init__(self, errors: list[ItemError]) -> None:
        self.errors = errors
        super().__init__("; ".join(_describe(e) for e in errors))


def _describe(e: ItemError) -> str:
    where = []
    if e.index is not None:
        where.append(f"item {e.index}")
    if e.field is not None:
        where.append(e.field)
    return f"{' '.join(where)}: {e.reason}" if where else e.reason


def invalid(reason: str, *, field: str | None = None, index: int | None = None) -> ValidationError:
    return ValidationError([ItemError(reason=reason, field=field, index=index)])


class NotFoundError(SgamError):
    def __init__(self, kind: str, ident: str) -> None:
        self.kind = kind
        self.ident = ident
        super().__init__(f"{kind} {ident!r} not found")


class ConflictError(SgamError):
    def __init__(self, detail: str, **context: Any) -> None:
        self.detail = detail
        self.context = context
        super().__init__(detail)


class FactConflictError(ConflictError):
    """Two facts on one timeline start at the same instant and the policy is ``reject``."""

    def __init__(
        self,
        *,
        index: int | None,
        conflicting_fact_id: str,
        conflicting_source_episode_id: str | None,
        source_episode_id: str | None,
        timeline: str,
        valid_from: str,
    ) -> None:
        self.index = index
        self.conflicting_fact_id = conflicting_fact_id
        self.conflicting_source_episode_id = conflicting_source_episode_id
        self.source_episode_id = source_episode_id
        detail = (
            f"{timeline} already has fact {conflicting_fact_id} "
            f"(source episode {conflicting_source_episode_id}) starting at {valid_from}; "
            f"the new fact (source episode {source_episode_id}) starts at the same instant. "
            "Choose conflict_policy latest_recorded_wins or highest_confidence_wins to settle it."
        )
        super().__init__(
            detail,
            index=index,
            conflicting_fact_id=conflicting_fact_id,
            conflicting_source_episode_id=conflicting_source_episode_id,
            source_episode_id=source_episode_id,
        )


class LeaseLostError(ConflictError):
    """The worker's lease on the episode expired and another worker took it: its facts
    are not written (the other worker's are)."""

    def __init__(self, episode_id: str, owner: str) -> None:
        super().__init__(
            f"the lease on episode {episode_id!r} is no longer held by {owner!r}",
            episode_id=episode_id,
        )


class StoreUnavailableError(SgamError):
    def __init__(self, detail: str, retry_after: int | None = None) -> None:
        # Seconds a client should wait; None: the server's SGAM_RETRY_AFTER_SECONDS.
        self.retry_after = retry_after
        super().__init__(detail)


class TransientStoreError(StoreUnavailableError):
    """The transaction failed for a passing reason and may be run again as a whole."""


class StoreFailedError(SgamError):
    """The store answered with a permanent failure (a missing table, a disk I/O error, a
    corrupt file): a server fault for an operator, not a reason for the client to retry."""


class TemplateError(SgamError):
    """A query template is malformed; raised when the store loads its templates."""
