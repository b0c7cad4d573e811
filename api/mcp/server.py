"""The MCP server: the ten tools of :mod:`api.mcp.tools` on the SDK's low-level ``Server``.

The low-level server (not ``MCPServer``) lets each tool's input schema be the REST model's
own JSON schema, and lets every refusal carry the REST problem body: ``MCPServer`` derives
schemas from function signatures and words validation errors itself.

A call is checked in this order, and each refusal is a tool error (``is_error``) whose text
is the ``detail`` of the problem REST answers for the same input, with the whole problem
(``type``, ``title``, ``status``, ``errors``, ``request_id``...) as structured content:

1. the tool exists (else 404, naming the tools that do);
2. the arguments, as JSON, fit the REST body limit and are portable JSON (413 / 400,
   naming the argument at fault);
3. the arguments validate against the tool's model (422, item by item, as REST);
4. the service call: domain errors map through :mod:`api.errors` exactly as on REST.

Nothing a call sends stops the server; an unexpected exception is logged and answered as
``internal error``, like a REST 500.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)
from pydantic import BaseModel, ValidationError

from api.errors import error_problem, problem_body, validation_problem
from api.limits import json_body_problem
from api.mcp.tools import BY_NAME, TOOL_NAMES, TOOLS, Services, ToolSpec
from api.observability import (
    REQUEST_ID_SCOPE_KEY,
    accept_request_id,
    bind_request_id,
    current_request_id,
)
from api.problems import HTTP_PROBLEMS
from api.schemas import API_VERSION
from graph.errors import ConflictError, SgamError, StoreUnavailableError
from graph.tracing import span

log = logging.getLogger("sgam.mcp")

SERVER_NAME = "sgam"
TENANT_SCOPE_KEY = "sgam.mcp.tenant"  # set on each HTTP request by api.mcp.http
INSTRUCTIONS = """\
sgam is a temporal memory: typed facts with validity intervals and the episodes that
stated them. Each turn worth remembering: add_episode with a stable episode_id and the
facts it states. Before answering from memory: get_context with the question (and as_of
when the question is about a past date). A changed value is a new fact; the old one stays
in history (get_history). Use retract_fact only when something stopped being true, and
delete_episode only for data recorded by mistake.
"""

TenantOf = Callable[[ServerRequestContext[Any, Any]], str]


def _tool(spec: ToolSpec) -> Tool:
    return Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema(),
        output_schema=spec.output_schema(),
        annotations=spec.annotations,
    )


def _error(problem: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=str(problem.get("detail") or problem["title"]))],
        structured_content=problem,
        is_error=True,
    )


def _http_problem(status: int, detail: str, instance: str, **members: Any) -> dict[str, Any]:
    slug, title = HTTP_PROBLEMS[status]
    return problem_body(
        status=status, slug=slug, title=title, detail=detail, instance=instance, **members
    )


def argument_problem(
    arguments: dict[str, Any], *, limit: int, instance: str
) -> dict[str, Any] | None:
    """413 when the arguments take more than ``limit`` bytes as JSON, 400 when one is not
    portable JSON (REST's check of request bodies); each names the argument at fault."""
    sizes = {k: len(json.dumps(v).encode()) for k, v in arguments.items()}
    total = len(json.dumps(arguments).encode())
    if total > limit:
        field = max(sizes, key=lambda k: sizes[k])
        body = _http_problem(
            413,
            f"argument {field!r} is too large: the arguments of one call may take at most "
            f"{limit} bytes as JSON (the limit of a REST request body); they take {total}",
            instance,
            limit=limit,
            errors=[{"field": field, "reason": f"takes {sizes[field]} bytes as JSON"}],
        )
        return body
    for name, value in arguments.items():
        reason = json_body_problem(json.dumps(value).encode())
        if reason is not None:
            return _http_problem(
                400,
                f"argument {name!r} is not portable JSON: {reason}",
                instance,
                errors=[{"field": name, "reason": reason}],
            )
    return None


class SgamMcp:
    """The tools bound to :class:`Services`; ``tenant_of`` says whose memory a call reads
    (a fixed tenant over stdio, the key's over HTTP)."""

    def __init__(self, services: Services, *, tenant_of: TenantOf, max_argument_bytes: int):
        self.services = services
        self.tenant_of = tenant_of
        self.limit = max_argument_bytes
        self._tools = [_tool(t) for t in TOOLS]
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version=_version(),
            title="sgam temporal memory",
            instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
        )

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=list(self._tools))

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        request = ctx.request
        scope = getattr(request, "scope", None) or {}
        # One id per call: the HTTP request's (also in its logs), else a fresh one.
        bind_request_id(accept_request_id(scope.get(REQUEST_ID_SCOPE_KEY)))
        name = params.name
        instance = f"mcp:tools/{name}"
        spec = BY_NAME.get(name)
        if spec is None:
            return _error(
                _http_problem(
                    404, f"unknown tool {name!r}; the tools are {', '.join(TOOL_NAMES)}", instance
                )
            )
        arguments = dict(params.arguments or {})
        refused = argument_problem(arguments, limit=self.limit, instance=instance)
        if refused is not None:
            return _error(refused)
        try:
            args = spec.arguments.model_validate(arguments)
        except ValidationError as e:
            located = [{**err, "loc": ("body", *err["loc"])} for err in e.errors()]
            problem = validation_problem(located, instance=instance)
            for item in problem["errors"]:
                item["location"] = "arguments"
            return _error(problem)
        try:
            tenant = self.tenant_of(ctx)
        except SgamError as e:
            return _error(error_problem(e, instance=instance)[1])
        with span("mcp.tool", **{"mcp.tool.name": name, "sgam.tenant": tenant}):
            return await self._run(spec, tenant, args, instance)

    async def _run(
        self, spec: ToolSpec, tenant: str, args: BaseModel, instance: str
    ) -> CallToolResult:
        try:
            # The service and the stores block: a worker thread (context variables go along).
            result = await anyio.to_thread.run_sync(partial(spec.run, self.services, tenant, args))
        except SgamError as e:
            if isinstance(e, ConflictError):
                self.services.metrics.conflicts.labels(kind=type(e).__name__).inc()
            elif isinstance(e, StoreUnavailableError):
                self.services.metrics.store_errors.labels(kind=type(e).__name__).inc()
                log.warning("store unavailable in tool %s: %s", spec.name, e)
            return _error(error_problem(e, instance=instance)[1])
        except Exception:
            log.exception("tool %s failed (request %s)", spec.name, current_request_id())
            return _error(_http_problem(500, "internal error", instance))
        data = result.model_dump(mode="json")
        text = data["text"] if spec.name == "get_context" else json.dumps(data)
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=data
        )


def _version() -> str:
    return API_VERSION


__all__ = ["INSTRUCTIONS", "SERVER_NAME", "TENANT_SCOPE_KEY", "SgamMcp", "argument_problem"]
