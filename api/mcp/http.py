"""``/mcp`` in ``sgam serve``: the tools over streamable HTTP, one tenant per call.

The bearer key chooses the tenant exactly as on REST (:class:`api.auth.KeyRing`):

- a tenant's key serves that tenant; ``?tenant=T`` may repeat it, and any other tenant
  answers 404 like a foreign REST path;
- the admin key, and an open server (no keys, loopback only), must name the tenant with
  ``/mcp?tenant=T`` (422 otherwise): nothing is ever read from a tenant by default;
- no key or an unknown key: 401.

These answers are problem+json, before the MCP transport sees the request. The transport
runs stateless with JSON answers (every POST carries its own key, so a call can only ever
reach its own key's tenant) and accepts bodies up to 4x the REST body limit, so that a
too-large *argument* is answered as a tool error naming it; beyond that, 413.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs

from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from api.auth import KeyRing, Principal, authorize, is_loopback
from api.deps import AppContext
from api.errors import error_response
from api.mcp.server import TENANT_SCOPE_KEY, SgamMcp
from api.mcp.tools import Services
from api.problems import PayloadTooLargeError, UnauthorizedError
from graph.errors import SgamError, StoreUnavailableError, invalid

TRANSPORT_FACTOR = 4  # HTTP body limit of /mcp, in REST body limits
LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


def choose_tenant(principal: Principal, asked: list[str]) -> str:
    """The tenant of a call: the key's, or the one ``?tenant=`` names if the key may."""
    if len(asked) > 1:
        raise invalid("name one tenant: /mcp?tenant=T", field="tenant")
    if asked:
        authorize(principal, asked[0])  # foreign, invalid, unknown: 404, as on REST
        return asked[0]
    if principal.tenant is None:
        raise invalid(
            "the admin key (or an open server) reaches every tenant: name one with /mcp?tenant=T",
            field="tenant",
        )
    return principal.tenant


def tenant_of_request(ctx: ServerRequestContext[Any, Any]) -> str:
    scope = getattr(ctx.request, "scope", None)
    tenant = scope.get(TENANT_SCOPE_KEY) if isinstance(scope, dict) else None
    if not isinstance(tenant, str):  # only requests through McpHttp reach the tools
        raise UnauthorizedError("this call carries no tenant")
    return tenant


class McpHttp:
    """The ASGI endpoint mounted at ``/mcp``; enter :meth:`run` in the app's lifespan."""

    def __init__(
        self,
        services: Services,
        *,
        keyring: KeyRing,
        max_body_bytes: int,
        loopback: bool,
    ) -> None:
        self.keyring = keyring
        self.mcp = SgamMcp(services, tenant_of=tenant_of_request, max_argument_bytes=max_body_bytes)
        self.max_request_bytes = TRANSPORT_FACTOR * max_body_bytes
        # On loopback, refuse other Host/Origin headers: a web page must not reach a local
        # server through DNS rebinding (the SDK's own default for local servers).
        self.security = (
            TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=LOOPBACK_HOSTS,
                allowed_origins=LOOPBACK_ORIGINS,
            )
            if loopback
            else None
        )
        self._manager: StreamableHTTPSessionManager | None = None

    @classmethod
    def from_context(cls, ctx: AppContext) -> McpHttp:
        services = Services(
            service=ctx.service,
            metrics=ctx.metrics,
            settings=ctx.settings,
            extractor=ctx.extractor,
        )
        return cls(
            services,
            keyring=ctx.keyring,
            max_body_bytes=ctx.settings.max_body_bytes,
            loopback=is_loopback(ctx.settings.host),
        )

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Serve while inside (a session manager runs once, so each lifespan gets its own)."""
        manager = StreamableHTTPSessionManager(
            app=self.mcp.server,
            stateless=True,
            json_response=True,
            security_settings=self.security,
            max_request_body_size=self.max_request_bytes,
        )
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        authorization: str | None = None
        declared = 0
        for name, value in scope["headers"]:
            if name == b"authorization":
                authorization = value.decode("latin-1")
            elif name == b"content-length" and value.isdigit():
                declared = int(value)
        asked = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("tenant", [])
        try:
            if self._manager is None:
                raise StoreUnavailableError("the MCP endpoint is not running (app lifespan)")
            if declared > self.max_request_bytes:  # streamed bodies: the SDK counts them
                raise PayloadTooLargeError(self.max_request_bytes)
            principal = self.keyring.authenticate(authorization)
            scope[TENANT_SCOPE_KEY] = choose_tenant(principal, asked)
        except SgamError as e:
            await error_response(e, instance=scope["path"])(scope, receive, send)
            return
        await self._manager.handle_request(scope, receive, send)
