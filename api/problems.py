"""The one table from domain errors to HTTP statuses (RFC 9457 problem types).

Handlers walk the exception's class hierarchy, so a subclass maps like its base unless it
has a row of its own.
"""

from __future__ import annotations

from graph.errors import (
    ConflictError,
    FactConflictError,
    NotFoundError,
    SgamError,
    StoreUnavailableError,
    ValidationError,
)

PROBLEMS: dict[type[SgamError], tuple[int, str, str]] = {
    # error class: (status, problem type slug, title)
    ValidationError: (422, "invalid-input", "Invalid input"),
    NotFoundError: (404, "not-found", "Not found"),
    FactConflictError: (409, "fact-conflict", "Conflicting fact"),
    ConflictError: (409, "conflict", "Conflict"),
    StoreUnavailableError: (503, "store-unavailable", "Store unavailable"),
}


def problem_for(error: SgamError) -> tuple[int, str, str]:
    for cls in type(error).__mro__:
        row = PROBLEMS.get(cls)  # type: ignore[arg-type]
        if row is not None:
            return row
    return 500, "internal", "Internal error"
