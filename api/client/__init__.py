"""Typed Python clients of REST API v1, sync and async, on httpx.

    with SgamClient("http://127.0.0.1:8080", api_key="k1") as sgam:
        sgam.create_episode("acme", {"episode_id": "e1", "content": "...",
                                     "occurred_at": "2026-06-01T09:00:00Z"})
        page = sgam.facts("acme", subject="mira", predicate="passport_deadline")

Both clients have every operation of the API, answer with the server's own models and
raise :class:`SgamAPIError` (a subclass per status, :mod:`api.client.errors`) carrying the
RFC 9457 problem body. Layout: :mod:`~api.client.calls` builds each request and parses its
answer, once; :mod:`~api.client.operations` binds them as methods; :mod:`~api.client.sync`
and :mod:`~api.client.async_` hold only the two transport loops.
"""

from api.client.async_ import AsyncSgamClient
from api.client.calls import DEFAULT_TIMEOUT, Call, FactFilters
from api.client.errors import (
    SgamAPIError,
    SgamBadRequest,
    SgamConflict,
    SgamNotFound,
    SgamPayloadTooLarge,
    SgamUnauthorized,
    SgamUnavailable,
    api_error,
    raise_for_problem,
)
from api.client.sync import SgamClient, SyncClient

__all__ = [
    "DEFAULT_TIMEOUT",
    "AsyncSgamClient",
    "Call",
    "FactFilters",
    "SgamAPIError",
    "SgamBadRequest",
    "SgamClient",
    "SgamConflict",
    "SgamNotFound",
    "SgamPayloadTooLarge",
    "SgamUnauthorized",
    "SgamUnavailable",
    "SyncClient",
    "api_error",
    "raise_for_problem",
]
