"""The blocking clients: :class:`SyncClient`, every operation answered synchronously, and
:class:`SgamClient`, which answers them over HTTP with ``httpx.Client``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import Any, Self, TypeVar, Unpack

import httpx

from api.client.calls import Call, FactFilters, HttpShell
from api.client.operations import Operations, SyncSender
from graph.model import Fact

T = TypeVar("T")


class SyncClient(Operations, SyncSender):
    """Every operation of REST API v1 as a blocking method: over HTTP (:class:`SgamClient`)
    or in-process (:class:`api.local.LocalClient`). Code written against this class runs
    on either."""

    def iter_facts(
        self, tenant: str, *, page_size: int = 100, **filters: Unpack[FactFilters]
    ) -> Iterator[Fact]:
        """Every fact of the read, page by page (the cursor pins as_of and known_at)."""
        cursor: str | None = None
        while True:
            page = self.facts(tenant, limit=page_size, cursor=cursor, **filters)
            yield from page.facts
            if (cursor := page.next_cursor) is None:
                return

    def close(self) -> None:
        """Release what the client holds (connections, an owned store)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class SgamClient(SyncClient, HttpShell[httpx.BaseTransport, httpx.Client]):
    """Blocking client of REST API v1. ``transport`` lets tests call an app in-process.

    with SgamClient("http://127.0.0.1:8080", api_key="k1") as sgam:
        page = sgam.facts("acme", subject="mira", predicate="passport_deadline")
    """

    _http_factory = httpx.Client

    def _send(self, call: Call[T]) -> T:
        response = self._http.request(call.method, call.path, params=call.params, json=call.json)
        return call.parse(response)

    def raw(
        self, method: str, path: str, *, json: Any = None, params: Mapping[str, str] | None = None
    ) -> httpx.Response:
        """Send a request as given and return the response unparsed."""
        return self._http.request(method, path, json=json, params=params)

    def close(self) -> None:
        self._http.close()
