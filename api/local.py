"""Every operation of the REST API, in-process: :class:`LocalClient`.

It is a :class:`~api.client.SyncClient` like :class:`~api.client.SgamClient`, with the same
methods and answers, but runs each operation by calling the route's own handler with the
service, instead of sending the request: no server, no socket. Bodies are validated with
the routes' body models, and errors are the client's errors carrying the problem the
server would have answered (same status, title, detail and members). So a command or a
scenario written against :class:`~api.client.SyncClient` means the same in-process
(``--store URL``) as over HTTP (``--api URL``).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypeVar, get_origin, get_type_hints
from urllib.parse import unquote

import pydantic
from fastapi import Response, params
from fastapi.exceptions import RequestValidationError

from api.auth import OPEN, KeyRing, authorize
from api.client import Call, SgamAPIError, SyncClient, api_error
from api.deps import AppContext
from api.errors import _describe, error_response, validation_items
from api.metrics import Metrics
from api.problems import HTTP_PROBLEMS, problem_type
from api.routes import entities, episodes, extraction, health, schema, search, tenants
from api.routes import facts as facts_routes
from api.schemas import FactRetract, FactsCreate, Problem
from api.settings import Settings
from extraction import build_extractor
from graph import EpisodeCreate, MemoryService, SgamError, Store, open_store

T = TypeVar("T")
M = TypeVar("M", bound=pydantic.BaseModel)
Args = dict[str, Any]


def problem_of(error: SgamError, *, instance: str) -> SgamAPIError:
    """The client error for a domain error: the problem the API answers for it."""
    response = error_response(error, instance=instance)
    problem = Problem.model_validate_json(bytes(response.body))
    retry = response.headers.get("retry-after")
    return api_error(problem, retry_after=int(retry) if retry else None)


def invalid_input(error: pydantic.ValidationError, *, location: str, instance: str) -> SgamAPIError:
    """The 422 the API answers for a body or query its models refuse, item by item."""
    return invalid_items([{**e, "loc": (location, *e["loc"])} for e in error.errors()], instance)


def invalid_items(errors: Sequence[Any], instance: str) -> SgamAPIError:
    """The 422 for validation errors whose locations are already the API's."""
    items = validation_items(errors)
    detail = "; ".join(_describe(i) for i in items)  # the server's own wording
    slug, title = HTTP_PROBLEMS[422]
    problem = Problem.model_validate(
        {
            "type": problem_type(slug),
            "title": title,
            "status": 422,
            "detail": detail,
            "instance": instance,
            "errors": items,
        }
    )
    return api_error(problem)


class LocalClient(SyncClient):
    """The API's operations against a store, in this process.

        with LocalClient.open("sqlite:///m.db") as sgam:
            sgam.facts("acme", subject="mira", predicate="passport_deadline")

    ``settings`` (default: from the environment) configures extraction as on the server;
    background extraction is queued for ``sgam worker``, since no worker runs here.
    """

    def __init__(
        self, store: Store, *, settings: Settings | None = None, owns_store: bool = False
    ) -> None:
        settings = settings if settings is not None else Settings(store_url=store.url)
        self._owns_store = owns_store
        self.ctx = AppContext(
            settings=settings,
            store=store,
            service=MemoryService(store),
            metrics=Metrics(),
            keyring=KeyRing([]),
            extractor=build_extractor(settings),
        )

    @classmethod
    def open(cls, store_url: str | None = None, *, settings: Settings | None = None) -> LocalClient:
        """Open the store at ``store_url`` (default SGAM_STORE_URL, else the embedded file);
        closing the client closes it. Raises the store's error when it cannot be opened."""
        store = open_store(store_url, init=False)
        try:
            store.init()  # connects: a store that cannot be reached is closed again here
            return cls(store, settings=settings, owns_store=True)
        except BaseException:
            store.close()
            raise

    def close(self) -> None:
        if self.ctx.extractor is not None:
            self.ctx.extractor.close()
        if self._owns_store:
            self.ctx.store.close()

    def _send(self, call: Call[T]) -> T:
        handler: Callable[[LocalClient, Call[T], Args], T] | None = HANDLERS.get(call.operation)
        if handler is None:
            raise NotImplementedError(f"no in-process handler for {call.operation or call.path}")
        # Left out, as on the wire: the route's default applies.
        given = {k: v for k, v in call.arguments.items() if v is not None}
        try:
            if "tenant" in given:  # as the tenant gate does: an invalid id is not found
                authorize(OPEN, given["tenant"])
            return handler(self, call, given)
        except SgamError as e:
            raise problem_of(e, instance=unquote(call.path)) from e
        except RequestValidationError as e:  # a route that parses its raw body itself
            raise invalid_items(e.errors(), unquote(call.path)) from e

    @staticmethod
    def _body(model: type[M], call: Call[Any]) -> M:
        try:
            return model.model_validate(call.json if call.json is not None else {})
        except pydantic.ValidationError as e:
            raise invalid_input(e, location="body", instance=unquote(call.path)) from None


def _create_episode(c: LocalClient, call: Call[Any], a: Args) -> Any:
    return episodes.create_episode(
        tenant=a["tenant"],
        body=c._body(EpisodeCreate, call),
        response=Response(),
        service=c.ctx.service,
        metrics=c.ctx.metrics,
        extractor=c.ctx.extractor,
        ctx=c.ctx,
    )


def _write_facts(c: LocalClient, call: Call[Any], a: Args) -> Any:
    body = c._body(FactsCreate, call)
    return facts_routes.write_facts(
        tenant=a["tenant"], body=body, service=c.ctx.service, metrics=c.ctx.metrics
    )


def _retract_fact(c: LocalClient, call: Call[Any], a: Args) -> Any:
    body = c._body(FactRetract, call)
    return facts_routes.retract_fact(a["tenant"], a["fact_id"], c.ctx.service, body)


def _put_schema(c: LocalClient, call: Call[Any], a: Args) -> Any:
    # The route takes the raw body (it parses and checks the schema's limits itself).
    raw = json.dumps(call.json if call.json is not None else {}).encode()
    return schema.put_schema(a["tenant"], raw, c.ctx.service)


def _search(c: LocalClient, call: Call[Any], a: Args) -> Any:
    return search.search(a["tenant"], c._body(search.SearchRequest, call), c.ctx.store)


def _context(c: LocalClient, call: Call[Any], a: Args) -> Any:
    return search.context(a["tenant"], c._body(search.ContextRequest, call), c.ctx.store)


def _confirm(c: LocalClient, call: Call[Any], a: Args) -> Any:
    body = c._body(extraction.Decision, call)
    return extraction.confirm(a["tenant"], a["candidate_id"], c.ctx.service, body)


def _reject(c: LocalClient, call: Call[Any], a: Args) -> Any:
    body = c._body(extraction.Decision, call)
    return extraction.reject(a["tenant"], a["candidate_id"], c.ctx.service, body)


def _forget(c: LocalClient, call: Call[Any], a: Args) -> Any:
    body = c._body(tenants.ForgetRequest, call)
    return tenants.forget_entity(a["tenant"], a["entity_id"], c.ctx.store, body)


def _delete_tenant(c: LocalClient, call: Call[Any], a: Args) -> Any:
    return tenants.erase_tenant(a["tenant"], c.ctx.store, OPEN)  # in-process: the admin


def _parameters(route: Callable[..., Any]) -> type[pydantic.BaseModel]:
    """The route's path and query parameters as a model, with the constraints FastAPI
    checks (``Query(ge=1, le=...)`` is a pydantic field); dependencies left out."""
    hints = get_type_hints(route, include_extras=True)
    fields: dict[str, Any] = {}
    for p in inspect.signature(route).parameters.values():
        hint = hints[p.name]
        if get_origin(hint) is Annotated and any(
            isinstance(m, params.Depends) for m in hint.__metadata__
        ):
            continue
        fields[p.name] = (hint, ... if p.default is inspect.Parameter.empty else p.default)
    return pydantic.create_model(f"{route.__name__}_parameters", **fields)


def _with_service(route: Callable[..., Any]) -> Callable[[LocalClient, Call[Any], Args], Any]:
    """A route whose arguments are the operation's (path and query) plus the service; the
    arguments are checked first, as FastAPI checks the query (422 naming the parameter)."""
    model = _parameters(route)

    def handle(c: LocalClient, call: Call[Any], a: Args) -> Any:
        tenant = a.pop("tenant")
        try:
            checked = model.model_validate(a)
        except pydantic.ValidationError as e:
            raise invalid_input(e, location="query", instance=unquote(call.path)) from None
        return route(tenant=tenant, service=c.ctx.service, **dict(checked))

    return handle


def _retry(c: LocalClient, call: Call[Any], a: Args) -> Any:
    # The route's extractor is a dependency: here, the local context's.
    return extraction.retry(
        tenant=a["tenant"],
        episode_id=a["episode_id"],
        service=c.ctx.service,
        extractor=c.ctx.extractor,
    )


def _metrics(c: LocalClient, call: Call[Any], a: Args) -> Any:
    return c.ctx.metrics.render().decode()


HANDLERS: dict[str, Callable[[LocalClient, Call[Any], Args], Any]] = {
    "create_episode": _create_episode,
    "get_episode": _with_service(episodes.get_episode),
    "delete_episode": _with_service(episodes.delete_episode),
    "retry_episode": _retry,
    "write_facts": _write_facts,
    "retract_fact": _retract_fact,
    "facts": _with_service(facts_routes.read_facts),
    "history": _with_service(facts_routes.fact_history),
    "entity": _with_service(entities.get_entity),
    "neighbors": _with_service(entities.get_neighbors),
    "entity_predicates": _with_service(entities.get_predicates),
    "get_schema": _with_service(schema.get_schema),
    "put_schema": _put_schema,
    "forget_entity": _forget,
    "delete_tenant": _delete_tenant,
    "search": _search,
    "context": _context,
    "candidates": _with_service(extraction.list_candidates),
    "candidate": _with_service(extraction.get_candidate),
    "confirm_candidate": _confirm,
    "reject_candidate": _reject,
    "merge_candidates": _with_service(extraction.list_merge_candidates),
    "accept_merge_candidate": _with_service(extraction.accept_merge),
    "dismiss_merge_candidate": _with_service(extraction.dismiss_merge),
    "healthz": lambda c, call, a: health.healthz(),
    "readyz": lambda c, call, a: health.readyz(c.ctx.store),
    "metrics": _metrics,
}
