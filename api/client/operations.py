"""The clients' methods, declared once: each is a request builder of :mod:`api.client.calls`
bound to the client's ``_send``.

On a :class:`SyncSender` the bound method returns the parsed answer; on an
:class:`AsyncSender` it returns an awaitable of it. At run time both are the same line,
``self._send(call)``, because an async ``_send`` already returns an awaitable; only the
static types differ, and the overloads of :meth:`Operation.__get__` say how. Signatures
and docstrings are the builders' own (``help()`` shows them).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Generic, ParamSpec, Self, TypeVar, overload

from api.client import calls
from api.client.calls import Call

P = ParamSpec("P")
T = TypeVar("T")


class SyncSender:
    """A client whose ``_send`` blocks until the answer is parsed."""

    def _send(self, call: Call[T]) -> T:
        raise NotImplementedError


class AsyncSender:
    """A client whose ``_send`` is a coroutine."""

    async def _send(self, call: Call[T]) -> T:
        raise NotImplementedError


class Operation(Generic[P, T]):
    """A request builder that becomes a method of whichever client it is read from."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self.build = build
        self.signature = inspect.signature(build)
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    def call(self, *args: P.args, **kwargs: P.kwargs) -> Call[T]:
        """The request, named, with the arguments as given (what was left out stays out:
        the server's default applies, whichever way the call goes)."""
        given = self.signature.bind(*args, **kwargs).arguments
        return dataclasses.replace(
            self.build(*args, **kwargs), operation=self.name, arguments=given
        )

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Self: ...

    @overload
    def __get__(self, client: SyncSender, owner: type[Any]) -> Callable[P, T]: ...

    @overload
    def __get__(self, client: AsyncSender, owner: type[Any]) -> Callable[P, Awaitable[T]]: ...

    def __get__(self, client: SyncSender | AsyncSender | None, owner: type[Any]) -> Any:
        if client is None:
            return self
        send = client._send

        @functools.wraps(self.build)
        def method(*args: P.args, **kwargs: P.kwargs) -> Any:
            return send(self.call(*args, **kwargs))

        return method


class Operations:
    """Every operation of REST API v1, by the name of its builder."""

    # episodes
    create_episode = Operation(calls.create_episode)
    get_episode = Operation(calls.get_episode)
    delete_episode = Operation(calls.delete_episode)
    retry_episode = Operation(calls.retry_episode)
    # facts
    write_facts = Operation(calls.write_facts)
    retract_fact = Operation(calls.retract_fact)
    facts = Operation(calls.facts)
    history = Operation(calls.history)
    # entities
    entity = Operation(calls.entity)
    neighbors = Operation(calls.neighbors)
    entity_predicates = Operation(calls.entity_predicates)
    # schema
    get_schema = Operation(calls.get_schema)
    put_schema = Operation(calls.put_schema)
    # erasure
    forget_entity = Operation(calls.forget_entity)
    delete_tenant = Operation(calls.delete_tenant)
    # retrieval
    search = Operation(calls.search)
    context = Operation(calls.context)
    # extraction review
    candidates = Operation(calls.candidates)
    candidate = Operation(calls.candidate)
    confirm_candidate = Operation(calls.confirm_candidate)
    reject_candidate = Operation(calls.reject_candidate)
    merge_candidates = Operation(calls.merge_candidates)
    accept_merge_candidate = Operation(calls.accept_merge_candidate)
    dismiss_merge_candidate = Operation(calls.dismiss_merge_candidate)
    # service
    healthz = Operation(calls.healthz)
    readyz = Operation(calls.readyz)
    metrics = Operation(calls.metrics)


OPERATIONS: tuple[str, ...] = tuple(
    name for name, v in vars(Operations).items() if isinstance(v, Operation)
)
