"""API keys and tenancy.

Every data path is ``/v1/tenants/{tenant}/...``. :class:`TenantGate` answers before
routing, body parsing or validation, so what a caller learns about a tenant it may not
see is exactly what it learns about one that does not exist: 404, same body. Keys are
compared in constant time, over all configured keys, on SHA-256 digests (equal lengths).

- keys configured, no or unknown key on a tenant path → 401;
- a key for tenant A on any path of tenant B (or of an invalid tenant id) → 404;
- the admin tenant ``*`` reaches every tenant; with no keys the server runs open.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from api.errors import error_response
from api.problems import UnauthorizedError
from api.settings import ApiKey
from graph.errors import NotFoundError, SgamError
from graph.model import valid_tenant

PRINCIPAL_SCOPE_KEY = "sgam.principal"
TENANT_PATH = re.compile(r"^/v1/tenants/(?P<tenant>[^/]*)(?:/|$)")


@dataclass(frozen=True)
class Principal:
    """Who is calling: one tenant, or every tenant (admin key, or an open server)."""

    tenant: str | None  # None: all tenants
    admin: bool

    def may_access(self, tenant: str) -> bool:
        return valid_tenant(tenant) and (self.tenant is None or self.tenant == tenant)


OPEN = Principal(tenant=None, admin=True)


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8")).digest()


class KeyRing:
    def __init__(self, keys: Sequence[ApiKey]) -> None:
        self._keys = [(_digest(k.key.get_secret_value()), k) for k in keys]

    @property
    def open(self) -> bool:
        return not self._keys

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal of an ``Authorization: Bearer <key>`` header."""
        if self.open:
            return OPEN
        if not authorization:
            raise UnauthorizedError("an API key is required: send Authorization: Bearer <key>")
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise UnauthorizedError("use the Bearer scheme: Authorization: Bearer <key>")
        presented = _digest(token)
        found: ApiKey | None = None
        for digest, key in self._keys:  # no early exit: every key is compared
            if hmac.compare_digest(digest, presented) and found is None:
                found = key
        if found is None:
            raise UnauthorizedError("unknown API key")
        if found.admin:
            return Principal(tenant=None, admin=True)
        return Principal(tenant=found.tenant, admin=False)


def authorize(principal: Principal, tenant: str) -> None:
    """Foreign, invalid and unknown tenants get the same answer."""
    if not principal.may_access(tenant):
        raise NotFoundError("tenant", tenant)


def tenant_of_path(path: str) -> str | None:
    m = TENANT_PATH.match(path)
    return m.group("tenant") if m else None


class TenantGate:
    """Authenticate and authorise every tenant path before anything else reads it."""

    def __init__(self, app: ASGIApp, *, keyring: KeyRing) -> None:
        self.app = app
        self.keyring = keyring

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        tenant = tenant_of_path(scope["path"])
        if tenant is None:
            await self.app(scope, receive, send)
            return
        authorization: str | None = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                authorization = value.decode("latin-1")
                break
        try:
            principal = self.keyring.authenticate(authorization)
            authorize(principal, tenant)
        except SgamError as e:
            await error_response(e, instance=scope["path"])(scope, receive, send)
            return
        scope[PRINCIPAL_SCOPE_KEY] = principal
        await self.app(scope, receive, send)


def is_loopback(host: str) -> bool:
    """True when every address ``host`` stands for is a loopback address."""
    name = host.strip("[]")
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        pass
    if name.lower() == "localhost":
        return True
    try:
        infos = socket.getaddrinfo(name, None)
    except OSError:
        return False
    addrs = {str(info[4][0]).split("%")[0] for info in infos}
    return bool(addrs) and all(ipaddress.ip_address(a).is_loopback for a in addrs)
