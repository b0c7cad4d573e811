"""The one table from errors to HTTP statuses (RFC 9457 problem types).

Handlers walk the exception's class hierarchy, so a subclass maps like its base unless it
has a row of its own. Besides the domain tree of :mod:`graph.errors`, the API raises two
errors of its own, defined here so that the table names every status it can answer:

    SgamError
    ├── UnauthorizedError     no key, or a key nobody configured                   (401)
    ├── ForbiddenError        a tenant's key asking what only the admin key may    (403)
    └── PayloadTooLargeError  a request body over ``max_body_bytes``               (413)
"""

from __future__ import annotations

from graph.errors import (
    ConflictError,
    FactConflictError,
    NotFoundError,
    SgamError,
    StoreFailedError,
    StoreUnavailableError,
    ValidationError,
)

PROBLEM_TYPE_BASE = "urn:sgam:problem:"


class UnauthorizedError(SgamError):
    """The request carries no API key, or one that is not configured."""


class ForbiddenError(SgamError):
    """The key may see the tenant, but the operation needs the admin key (``*``)."""


class PayloadTooLargeError(SgamError):
    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"the request body is larger than the limit of {limit} bytes")


PROBLEMS: dict[type[SgamError], tuple[int, str, str]] = {
    # error class: (status, problem type slug, title)
    ValidationError: (422, "invalid-input", "Invalid input"),
    UnauthorizedError: (401, "unauthorized", "Unauthorized"),
    ForbiddenError: (403, "forbidden", "Forbidden"),
    NotFoundError: (404, "not-found", "Not found"),
    FactConflictError: (409, "fact-conflict", "Conflicting fact"),
    ConflictError: (409, "conflict", "Conflict"),
    PayloadTooLargeError: (413, "payload-too-large", "Payload too large"),
    StoreUnavailableError: (503, "store-unavailable", "Store unavailable"),
    StoreFailedError: (500, "store-failed", "Store failed"),
}

# Problems raised by the HTTP layer itself rather than by an error class.
HTTP_PROBLEMS: dict[int, tuple[str, str]] = {
    400: ("bad-request", "Bad request"),
    401: ("unauthorized", "Unauthorized"),
    403: ("forbidden", "Forbidden"),
    404: ("not-found", "Not found"),
    405: ("method-not-allowed", "Method not allowed"),
    406: ("not-acceptable", "Not acceptable"),
    413: ("payload-too-large", "Payload too large"),
    415: ("unsupported-media-type", "Unsupported media type"),
    422: ("invalid-input", "Invalid input"),
    500: ("internal", "Internal error"),
}


def problem_for(error: SgamError) -> tuple[int, str, str]:
    for cls in type(error).__mro__:
        row = PROBLEMS.get(cls)
        if row is not None:
            return row
    return 500, "internal", "Internal error"


def problem_type(slug: str) -> str:
    return PROBLEM_TYPE_BASE + slug
