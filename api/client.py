"""Typed Python clients of REST API v1, sync and async, on httpx.

    with SgamClient("http://127.0.0.1:8080", api_key="k1") as sgam:
        sgam.create_episode("acme", {"episode_id": "e1", "content": "...",
                                     "occurred_at": "2026-06-01T09:00:00Z"})
        page = sgam.facts("acme", subject="mira", predicate="passport_deadline")

Both clients answer with the models of :mod:`api.schemas` (the server's own) and raise
:class:`SgamAPIError` — a subclass per status — carrying the RFC 9457 problem body.
Request bodies may be models or plain mappings (sent as they are; the server validates).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any, Generic, Self, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from api.schemas import (
    EntityPublic,
    EpisodePublic,
    EpisodeWritten,
    FactHistory,
    FactsPublic,
    Health,
    Problem,
    Ready,
)
from graph.model import (
    ConflictPolicy,
    DeleteResult,
    Direction,
    EpisodeCreate,
    Fact,
    MemoryDelta,
    Neighborhood,
    WriteResult,
)
from graph.schema import MemorySchema
from graph.timeutil import format_instant

DEFAULT_TIMEOUT = 30.0

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
Body = BaseModel | Mapping[str, Any]
Params = list[tuple[str, str]]


# -- errors ----------------------------------------------------------------------------
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


def raise_for_problem(response: httpx.Response) -> None:
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
    retry: int | None = None
    header = response.headers.get("retry-after")
    if header is not None and header.strip().isdigit():
        retry = int(header)
    cls = ERRORS.get(response.status_code, SgamAPIError)
    raise cls(response.status_code, problem, retry_after=retry)


# -- requests, built once for both clients ---------------------------------------------
@dataclass(frozen=True)
class Call(Generic[T]):
    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: Params | None = None
    json: Any = None


def _model(model: type[M]) -> Callable[[httpx.Response], M]:
    def parse(response: httpx.Response) -> M:
        raise_for_problem(response)
        return model.model_validate_json(response.content)

    return parse


def _text(response: httpx.Response) -> str:
    raise_for_problem(response)
    return response.text


def _seg(value: str) -> str:
    return quote(value, safe="")


def _tenant(tenant: str, rest: str = "") -> str:
    return f"/v1/tenants/{_seg(tenant)}{rest}"


def _body(value: Body) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return dict(value)


def _params(**values: str | int | datetime | Sequence[str] | None) -> Params:
    out: Params = []
    for name, v in values.items():
        if v is None:
            continue
        if isinstance(v, datetime):
            out.append((name, format_instant(v)))
        elif isinstance(v, str | int):
            out.append((name, str(v)))
        else:
            out.extend((name, item) for item in v)
    return out


class Calls:
    """Every route of API v1 as a :class:`Call`; the clients only send them."""

    @staticmethod
    def create_episode(
        tenant: str, episode: EpisodeCreate | Mapping[str, Any]
    ) -> Call[EpisodeWritten]:
        return Call(
            "POST", _tenant(tenant, "/episodes"), _model(EpisodeWritten), json=_body(episode)
        )

    @staticmethod
    def get_episode(tenant: str, episode_id: str) -> Call[EpisodePublic]:
        return Call("GET", _tenant(tenant, f"/episodes/{_seg(episode_id)}"), _model(EpisodePublic))

    @staticmethod
    def delete_episode(tenant: str, episode_id: str) -> Call[DeleteResult]:
        return Call(
            "DELETE", _tenant(tenant, f"/episodes/{_seg(episode_id)}"), _model(DeleteResult)
        )

    @staticmethod
    def write_facts(
        tenant: str,
        facts: Sequence[MemoryDelta | Mapping[str, Any]],
        conflict_policy: ConflictPolicy,
    ) -> Call[WriteResult]:
        body = {"facts": [_body(f) for f in facts], "conflict_policy": conflict_policy.value}
        return Call("POST", _tenant(tenant, "/facts"), _model(WriteResult), json=body)

    @staticmethod
    def retract_fact(tenant: str, fact_id: str, valid_to: datetime | None) -> Call[Fact]:
        body = {"valid_to": format_instant(valid_to)} if valid_to is not None else {}
        path = _tenant(tenant, f"/facts/{_seg(fact_id)}/retract")
        return Call("POST", path, _model(Fact), json=body)

    @staticmethod
    def facts(
        tenant: str,
        *,
        subject: str | None,
        predicate: str | None,
        object: str | None,
        memory_type: str | None,
        as_of: datetime | None,
        known_at: datetime | None,
        limit: int | None,
        cursor: str | None,
    ) -> Call[FactsPublic]:
        params = _params(
            subject=subject,
            predicate=predicate,
            object=object,
            memory_type=memory_type,
            as_of=as_of,
            known_at=known_at,
            limit=limit,
            cursor=cursor,
        )
        return Call("GET", _tenant(tenant, "/facts"), _model(FactsPublic), params=params)

    @staticmethod
    def history(
        tenant: str, *, subject: str, predicate: str, object: str | None, known_at: datetime | None
    ) -> Call[FactHistory]:
        params = _params(subject=subject, predicate=predicate, object=object, known_at=known_at)
        return Call("GET", _tenant(tenant, "/facts/history"), _model(FactHistory), params=params)

    @staticmethod
    def entity(
        tenant: str, entity_id: str, *, as_of: datetime | None, known_at: datetime | None
    ) -> Call[EntityPublic]:
        path = _tenant(tenant, f"/entities/{_seg(entity_id)}")
        return Call(
            "GET", path, _model(EntityPublic), params=_params(as_of=as_of, known_at=known_at)
        )

    @staticmethod
    def neighbors(
        tenant: str,
        entity_id: str,
        *,
        depth: int,
        predicates: Sequence[str] | None,
        direction: Direction,
        as_of: datetime | None,
        known_at: datetime | None,
    ) -> Call[Neighborhood]:
        params = _params(
            depth=depth,
            predicates=predicates,
            direction=direction.value,
            as_of=as_of,
            known_at=known_at,
        )
        path = _tenant(tenant, f"/entities/{_seg(entity_id)}/neighbors")
        return Call("GET", path, _model(Neighborhood), params=params)

    @staticmethod
    def get_schema(tenant: str) -> Call[MemorySchema]:
        return Call("GET", _tenant(tenant, "/schema"), _model(MemorySchema))

    @staticmethod
    def put_schema(tenant: str, schema: MemorySchema | Mapping[str, Any]) -> Call[MemorySchema]:
        return Call("PUT", _tenant(tenant, "/schema"), _model(MemorySchema), json=_body(schema))

    @staticmethod
    def healthz() -> Call[Health]:
        return Call("GET", "/healthz", _model(Health))

    @staticmethod
    def readyz() -> Call[Ready]:
        return Call("GET", "/readyz", _model(Ready))

    @staticmethod
    def metrics() -> Call[str]:
        return Call("GET", "/metrics", _text)


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"Accept": "application/json, application/problem+json"}
    if api_key is not None:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


# -- sync ------------------------------------------------------------------------------
class SgamClient:
    """Blocking client. ``transport`` lets tests call an app in-process."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
    ) -> None:
        self._http = httpx.Client(
            base_url=base_url, headers=_headers(api_key), transport=transport, timeout=timeout
        )

    def _send(self, call: Call[T]) -> T:
        response = self._http.request(
            call.method, call.path, params=tuple(call.params or ()), json=call.json
        )
        return call.parse(response)

    def raw(
        self, method: str, path: str, *, json: Any = None, params: Mapping[str, str] | None = None
    ) -> httpx.Response:
        """Send a request as given and return the response unparsed: for callers that must
        put bodies on the wire unchecked, such as replaying a scenario's invalid writes."""
        return self._http.request(method, path, json=json, params=params)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # episodes
    def create_episode(
        self, tenant: str, episode: EpisodeCreate | Mapping[str, Any]
    ) -> EpisodeWritten:
        return self._send(Calls.create_episode(tenant, episode))

    def get_episode(self, tenant: str, episode_id: str) -> EpisodePublic:
        return self._send(Calls.get_episode(tenant, episode_id))

    def delete_episode(self, tenant: str, episode_id: str) -> DeleteResult:
        return self._send(Calls.delete_episode(tenant, episode_id))

    # facts
    def write_facts(
        self,
        tenant: str,
        facts: Sequence[MemoryDelta | Mapping[str, Any]],
        *,
        conflict_policy: ConflictPolicy = ConflictPolicy.REJECT,
    ) -> WriteResult:
        return self._send(Calls.write_facts(tenant, facts, conflict_policy))

    def retract_fact(self, tenant: str, fact_id: str, *, valid_to: datetime | None = None) -> Fact:
        return self._send(Calls.retract_fact(tenant, fact_id, valid_to))

    def facts(
        self,
        tenant: str,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        memory_type: str | None = None,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> FactsPublic:
        return self._send(
            Calls.facts(
                tenant,
                subject=subject,
                predicate=predicate,
                object=object,
                memory_type=memory_type,
                as_of=as_of,
                known_at=known_at,
                limit=limit,
                cursor=cursor,
            )
        )

    def iter_facts(
        self,
        tenant: str,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        memory_type: str | None = None,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        page_size: int = 100,
    ) -> Iterator[Fact]:
        """Every fact of the read, page by page (one consistent as_of/known_at)."""
        page = self.facts(
            tenant,
            subject=subject,
            predicate=predicate,
            object=object,
            memory_type=memory_type,
            as_of=as_of,
            known_at=known_at,
            limit=page_size,
        )
        yield from page.facts
        while page.next_cursor is not None:
            page = self.facts(
                tenant,
                subject=subject,
                predicate=predicate,
                object=object,
                memory_type=memory_type,
                limit=page_size,
                cursor=page.next_cursor,
            )
            yield from page.facts

    def history(
        self,
        tenant: str,
        *,
        subject: str,
        predicate: str,
        object: str | None = None,
        known_at: datetime | None = None,
    ) -> FactHistory:
        return self._send(
            Calls.history(
                tenant, subject=subject, predicate=predicate, object=object, known_at=known_at
            )
        )

    # entities
    def entity(
        self,
        tenant: str,
        entity_id: str,
        *,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
    ) -> EntityPublic:
        return self._send(Calls.entity(tenant, entity_id, as_of=as_of, known_at=known_at))

    def neighbors(
        self,
        tenant: str,
        entity_id: str,
        *,
        depth: int = 1,
        predicates: Sequence[str] | None = None,
        direction: Direction = Direction.BOTH,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
    ) -> Neighborhood:
        return self._send(
            Calls.neighbors(
                tenant,
                entity_id,
                depth=depth,
                predicates=predicates,
                direction=direction,
                as_of=as_of,
                known_at=known_at,
            )
        )

    # schema
    def get_schema(self, tenant: str) -> MemorySchema:
        return self._send(Calls.get_schema(tenant))

    def put_schema(self, tenant: str, schema: MemorySchema | Mapping[str, Any]) -> MemorySchema:
        return self._send(Calls.put_schema(tenant, schema))

    # service
    def healthz(self) -> Health:
        return self._send(Calls.healthz())

    def readyz(self) -> Ready:
        return self._send(Calls.readyz())

    def metrics(self) -> str:
        return self._send(Calls.metrics())


# -- async -----------------------------------------------------------------------------
class AsyncSgamClient:
    """The same methods as :class:`SgamClient`, awaitable."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
    ) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=_headers(api_key), transport=transport, timeout=timeout
        )

    async def _send(self, call: Call[T]) -> T:
        response = await self._http.request(
            call.method, call.path, params=tuple(call.params or ()), json=call.json
        )
        return call.parse(response)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # episodes
    async def create_episode(
        self, tenant: str, episode: EpisodeCreate | Mapping[str, Any]
    ) -> EpisodeWritten:
        return await self._send(Calls.create_episode(tenant, episode))

    async def get_episode(self, tenant: str, episode_id: str) -> EpisodePublic:
        return await self._send(Calls.get_episode(tenant, episode_id))

    async def delete_episode(self, tenant: str, episode_id: str) -> DeleteResult:
        return await self._send(Calls.delete_episode(tenant, episode_id))

    # facts
    async def write_facts(
        self,
        tenant: str,
        facts: Sequence[MemoryDelta | Mapping[str, Any]],
        *,
        conflict_policy: ConflictPolicy = ConflictPolicy.REJECT,
    ) -> WriteResult:
        return await self._send(Calls.write_facts(tenant, facts, conflict_policy))

    async def retract_fact(
        self, tenant: str, fact_id: str, *, valid_to: datetime | None = None
    ) -> Fact:
        return await self._send(Calls.retract_fact(tenant, fact_id, valid_to))

    async def facts(
        self,
        tenant: str,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        memory_type: str | None = None,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> FactsPublic:
        return await self._send(
            Calls.facts(
                tenant,
                subject=subject,
                predicate=predicate,
                object=object,
                memory_type=memory_type,
                as_of=as_of,
                known_at=known_at,
                limit=limit,
                cursor=cursor,
            )
        )

    async def iter_facts(
        self,
        tenant: str,
        *,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        memory_type: str | None = None,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        page_size: int = 100,
    ) -> AsyncIterator[Fact]:
        page = await self.facts(
            tenant,
            subject=subject,
            predicate=predicate,
            object=object,
            memory_type=memory_type,
            as_of=as_of,
            known_at=known_at,
            limit=page_size,
        )
        for f in page.facts:
            yield f
        while page.next_cursor is not None:
            page = await self.facts(
                tenant,
                subject=subject,
                predicate=predicate,
                object=object,
                memory_type=memory_type,
                limit=page_size,
                cursor=page.next_cursor,
            )
            for f in page.facts:
                yield f

    async def history(
        self,
        tenant: str,
        *,
        subject: str,
        predicate: str,
        object: str | None = None,
        known_at: datetime | None = None,
    ) -> FactHistory:
        return await self._send(
            Calls.history(
                tenant, subject=subject, predicate=predicate, object=object, known_at=known_at
            )
        )

    # entities
    async def entity(
        self,
        tenant: str,
        entity_id: str,
        *,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
    ) -> EntityPublic:
        return await self._send(Calls.entity(tenant, entity_id, as_of=as_of, known_at=known_at))

    async def neighbors(
        self,
        tenant: str,
        entity_id: str,
        *,
        depth: int = 1,
        predicates: Sequence[str] | None = None,
        direction: Direction = Direction.BOTH,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
    ) -> Neighborhood:
        return await self._send(
            Calls.neighbors(
                tenant,
                entity_id,
                depth=depth,
                predicates=predicates,
                direction=direction,
                as_of=as_of,
                known_at=known_at,
            )
        )

    # schema
    async def get_schema(self, tenant: str) -> MemorySchema:
        return await self._send(Calls.get_schema(tenant))

    async def put_schema(
        self, tenant: str, schema: MemorySchema | Mapping[str, Any]
    ) -> MemorySchema:
        return await self._send(Calls.put_schema(tenant, schema))

    # service
    async def healthz(self) -> Health:
        return await self._send(Calls.healthz())

    async def readyz(self) -> Ready:
        return await self._send(Calls.readyz())

    async def metrics(self) -> str:
        return await self._send(Calls.metrics())


__all__ = [
    "AsyncSgamClient",
    "Calls",
    "SgamAPIError",
    "SgamBadRequest",
    "SgamClient",
    "SgamConflict",
    "SgamNotFound",
    "SgamPayloadTooLarge",
    "SgamUnauthorized",
    "SgamUnavailable",
    "raise_for_problem",
]
