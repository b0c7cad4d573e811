"""What the clients raise: the server answered with a problem (RFC 9457), or not at all.

    SgamAPIError             any answer with status >= 400; ``problem`` holds its body
    ├── SgamBadRequest       400 or 422: invalid input; ``problem.errors`` lists each item
    ├── SgamUnauthorized     401: no API key, or an unknown one
    ├── SgamNotFound         404: unknown resource, or a tenant the key may not see
    ├── SgamConflict         409: ``problem.conflicting_fact_id`` names the recorded fact
    ├── SgamPayloadTooLarge  413: the request body is over the server's limit
    └── SgamUnavailable      503: the store cannot answer; retry after ``retry_after`` s

A request that never got an answer (connection refused, timeout) raises httpx's own
:class:`httpx.TransportError`; catch :class:`SgamAPIError` for everything the server said.
"""

from __future__ import annotations

import httpx
from pydantic import ValidationError as PydanticValidationError

from api.schemas import Problem


class SgamAPIError(Exception):
    """The server answered with a problem (status >= 400)."""

    def __init__(self, status: int, problem: Problem, *, retry_after: int | None = None) -> None:
        self.status = status
        self.problem = problem
        self.retry_after = retry_after
        super().__init__(f"{status} {problem.title}: {problem.detail or ''}".rstrip(": "))


class SgamBadRequest(SgamAPIError):
    """400 or 422: invalid input; ``problem.errors`` lists each failing item."""


class SgamUnauthorized(SgamAPIError):
    """401: no or unknown API key."""


class SgamNotFound(SgamAPIError):
    """404: unknown resource, or a tenant the key may not see."""


class SgamConflict(SgamAPIError):
    """409: ``problem.conflicting_fact_id`` names the recorded fact."""


class SgamPayloadTooLarge(SgamAPIError):
    """413: the request body is over the server's limit."""


class SgamUnavailable(SgamAPIError):
    """503: the store is unavailable; retry after ``retry_after`` seconds."""


ERRORS: dict[int, type[SgamAPIError]] = {
    400: SgamBadRequest,
    401: SgamUnauthorized,
    404: SgamNotFound,
    409: SgamConflict,
    413: SgamPayloadTooLarge,
    422: SgamBadRequest,
    503: SgamUnavailable,
}


def api_error(problem: Problem, *, retry_after: int | None = None) -> SgamAPIError:
    """The error of the class that matches ``problem.status``."""
    cls = ERRORS.get(problem.status, SgamAPIError)
    return cls(problem.status, problem, retry_after=retry_after)


def raise_for_problem(response: httpx.Response) -> None:
    """Raise the :class:`SgamAPIError` for a response with status >= 400."""
    if response.status_code < 400:
        return
    try:
        problem = Problem.model_validate_json(response.content)
    except PydanticValidationError:
        problem = Problem(
            type="about:blank",
            title=response.reason_phrase or "HTTP error",
            status=response.status_code,
            detail=response.text[:1000] or None,
        )
    # The status on the wire decides, whatever the body claims.
    problem.status = response.status_code
    retry: int | None = None
    header = response.headers.get("retry-after")
    if header is not None and header.strip().isdigit():
        retry = int(header)
    raise api_error(problem, retry_after=retry)
