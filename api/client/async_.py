"""The async client: the same operations as :class:`~api.client.sync.SgamClient`, awaitable,
over ``httpx.AsyncClient``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Any, Self, TypeVar, Unpack

import httpx

from api.client.calls import Call, FactFilters, HttpShell
from api.client.operations import AsyncSender, Operations
from graph.model import Fact

T = TypeVar("T")


class AsyncSgamClient(
    Operations, AsyncSender, HttpShell[httpx.AsyncBaseTransport, httpx.AsyncClient]
):
    """Async client of REST API v1; every operation of :class:`SgamClient`, awaitable.

    async with AsyncSgamClient("http://127.0.0.1:8080", api_key="k1") as sgam:
        ctx = await sgam.context("acme", "When is Mira's passport deadline?")
    """

    _http_factory = httpx.AsyncClient

    async def _send(self, call: Call[T]) -> T:
        response = await self._http.request(
            call.method, call.path, params=call.params, json=call.json
        )
        return call.parse(response)

    async def iter_facts(
        self, tenant: str, *, page_size: int = 100, **filters: Unpack[FactFilters]
    ) -> AsyncIterator[Fact]:
        """Every fact of the read, page by page (the cursor pins as_of and known_at)."""
        cursor: str | None = None
        while True:
            page = await self.facts(tenant, limit=page_size, cursor=cursor, **filters)
            for fact in page.facts:
                yield fact
            if (cursor := page.next_cursor) is None:
                return

    async def raw(
        self, method: str, path: str, *, json: Any = None, params: Mapping[str, str] | None = None
    ) -> httpx.Response:
        """Send a request as given and return the response unparsed."""
        return await self._http.request(method, path, json=json, params=params)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
