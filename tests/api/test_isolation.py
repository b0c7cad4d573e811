"""Tenant isolation, over every route the app's OpenAPI schema lists.

Routes added later are covered without editing this file: each operation under
``/v1/tenants/{tenant}`` is called with tenant A's key on tenant B's paths (404, the same
answer as for a tenant that does not exist, and B's data unchanged), without a key (401),
and with A's key on A's own paths, whose answers must not contain any of B's ids.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import httpx
from fastapi.testclient import TestClient

from tests.api.conftest import AppFactory
from tests.api.helpers import problem

TENANT_PREFIX = "/v1/tenants/{tenant}"
# Operations known today; the enumeration must find at least these (it cannot go vacuous).
KNOWN = {
    ("post", "/v1/tenants/{tenant}/episodes"),
    ("get", "/v1/tenants/{tenant}/episodes/{episode_id}"),
    ("delete", "/v1/tenants/{tenant}/episodes/{episode_id}"),
    ("post", "/v1/tenants/{tenant}/facts"),
    ("get", "/v1/tenants/{tenant}/facts"),
    ("post", "/v1/tenants/{tenant}/facts/{fact_id}/retract"),
    ("get", "/v1/tenants/{tenant}/facts/history"),
    ("get", "/v1/tenants/{tenant}/entities/{entity_id}"),
    ("get", "/v1/tenants/{tenant}/entities/{entity_id}/neighbors"),
    ("get", "/v1/tenants/{tenant}/schema"),
    ("put", "/v1/tenants/{tenant}/schema"),
}
ORDER = {"get": 0, "post": 1, "put": 2, "patch": 3, "delete": 4}


class World:
    """One tenant's data, with ids unique to this test run so they can be searched for."""

    def __init__(self, tenant: str, key: str) -> None:
        tag = uuid.uuid4().hex[:10]
        self.tenant = tenant
        self.key = key
        self.episode = f"ep-{tag}"
        self.subject = f"subj-{tag}"
        self.object = f"obj-{tag}"
        self.predicate = "holds_account"
        self.fact_ids: list[str] = []

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def secrets(self) -> list[str]:
        """Strings that must never appear in another tenant's answers."""
        return [self.tenant, self.key, self.episode, self.subject, self.object, *self.fact_ids]

    def seed(self, client: TestClient) -> None:
        base = f"/v1/tenants/{self.tenant}"
        r = client.post(
            f"{base}/episodes",
            headers=self.headers,
            json={
                "episode_id": self.episode,
                "content": f"about {self.subject}",
                "occurred_at": "2026-06-01T09:00:00Z",
            },
        )
        assert r.status_code == 201, r.text
        r = client.post(
            f"{base}/facts",
            headers=self.headers,
            json={
                "facts": [
                    {
                        "subject": self.subject,
                        "predicate": self.predicate,
                        "object": self.object,
                        "valid_from": "2026-06-01T09:00:00Z",
                        "source_episode_id": self.episode,
                    },
                    {
                        "subject": self.subject,
                        "predicate": "nickname",
                        "value": f"nick of {self.subject}",
                        "valid_from": "2026-06-01T09:00:00Z",
                        "source_episode_id": self.episode,
                    },
                ]
            },
        )
        assert r.status_code == 201, r.text
        self.fact_ids = [f["fact_id"] for f in r.json()["facts"]]
        r = client.put(f"{base}/schema", headers=self.headers, json={"mode": "permissive"})
        assert r.status_code == 200, r.text

    def path_values(self) -> dict[str, str]:
        return {
            "tenant": self.tenant,
            "episode_id": self.episode,
            "fact_id": self.fact_ids[0],
            "entity_id": self.subject,
        }

    def query_values(self) -> dict[str, str]:
        return {
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "query": self.subject,
            "question": self.subject,
        }

    def body(self, method: str, template: str) -> Any:
        """A valid body: if authorisation were missing, the request would succeed."""
        route = (method, template.removeprefix(TENANT_PREFIX))
        if route == ("post", "/episodes"):
            return {
                "episode_id": f"new-{self.episode}",
                "content": "x",
                "occurred_at": "2026-06-02T09:00:00Z",
            }
        if route == ("post", "/facts"):
            return {
                "facts": [
                    {
                        "subject": self.subject,
                        "predicate": self.predicate,
                        "object": f"new-{self.object}",
                        "source_episode_id": self.episode,
                        "valid_from": "2026-06-02T09:00:00Z",
                    }
                ]
            }
        if route == ("post", "/facts/{fact_id}/retract"):
            return {"valid_to": "2026-06-05T00:00:00Z"}
        if route == ("put", "/schema"):
            return {"mode": "strict"}
        return {"query": self.subject, "question": self.subject}  # routes added later

    def snapshot(self, client: TestClient) -> str:
        base = f"/v1/tenants/{self.tenant}"
        parts = [
            client.get(f"{base}/facts", headers=self.headers).json()["facts"],
            client.get(f"{base}/episodes/{self.episode}", headers=self.headers).json(),
            client.get(f"{base}/schema", headers=self.headers).json(),
        ]
        return json.dumps(parts, sort_keys=True)


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    ops = [
        (method, path, op)
        for path, item in spec["paths"].items()
        for method, op in item.items()
        if method in ORDER
    ]
    return sorted(ops, key=lambda o: (ORDER[o[0]], o[1]))


def _request(
    client: TestClient,
    method: str,
    template: str,
    op: dict[str, Any],
    world: World,
    *,
    tenant: str | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    values = world.path_values()
    if tenant is not None:
        values["tenant"] = tenant
    names = re.findall(r"{(\w+)}", template)
    path = template.format(**{n: values.get(n, "x") for n in names})
    params = {
        p["name"]: world.query_values().get(p["name"], "x")
        for p in op.get("parameters", [])
        if p["in"] == "query" and p.get("required")
    }
    kwargs: dict[str, Any] = {"params": params, "headers": headers}
    if "requestBody" in op:
        kwargs["json"] = world.body(method, template)
    return client.request(method.upper(), path, **kwargs)


def _normal(body: dict[str, Any], tenant: str) -> str:
    body = {k: v for k, v in body.items() if k != "request_id"}  # unique to each request
    return json.dumps(body, sort_keys=True).replace(tenant, "<tenant>")


def test_every_route_is_tenant_isolated(
    make_app: AppFactory, tenant: str, other_tenant: str
) -> None:
    a = World(tenant, "key-a-" + uuid.uuid4().hex)
    b = World(other_tenant, "key-b-" + uuid.uuid4().hex)
    ghost = "ghost-" + uuid.uuid4().hex[:8]  # a tenant that does not exist
    app = make_app(api_keys=f"{a.tenant}:{a.key},{b.tenant}:{b.key}")
    with TestClient(app) as client:
        a.seed(client)
        b.seed(client)
        b_before = b.snapshot(client)
        ops = _operations(client.get("/openapi.json").json())
        tenant_ops = [o for o in ops if o[1].startswith(TENANT_PREFIX)]
        assert {(m, p) for m, p, _ in tenant_ops} >= KNOWN
        checked: list[str] = []
        for method, template, op in tenant_ops:
            where = f"{method.upper()} {template}"
            # A's key on B's paths, with B's real ids: 404 exactly like a missing tenant.
            foreign = _request(client, method, template, op, b, headers=a.headers)
            missing = _request(client, method, template, op, b, tenant=ghost, headers=a.headers)
            assert foreign.status_code == 404, where
            assert missing.status_code == 404, where
            assert _normal(problem(foreign, 404), b.tenant) == _normal(
                problem(missing, 404), ghost
            ), where
            assert foreign.headers.keys() == missing.headers.keys(), where
            # No key at all: 401, before anything else.
            problem(_request(client, method, template, op, b), 401)
            checked.append(where)
        assert b.snapshot(client) == b_before  # nothing A sent changed B

        # A on its own paths (deletes last): nothing of B in any answer, nor in the
        # service routes.
        for method, template, op in tenant_ops:
            own = _request(client, method, template, op, a, headers=a.headers)
            assert own.status_code < 500, (method, template, own.text)
            for secret in b.secrets():
                assert secret not in own.text, (method, template, secret)
        for method, template, op in ops:
            if template.startswith(TENANT_PREFIX):
                continue
            r = _request(client, method, template, op, a, headers=a.headers)
            for secret in b.secrets():
                assert secret not in r.text, (method, template, secret)
        assert b.snapshot(client) == b_before
    assert len(checked) >= len(KNOWN)
