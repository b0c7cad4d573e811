"""``/mcp`` in ``sgam serve``: a real uvicorn on loopback with keys for two tenants and an
admin, driven by the SDK's streamable HTTP client. The key chooses the tenant; a foreign
tenant's data is invisible, and refusals say exactly what REST says."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from api.server import running
from api.settings import Settings
from graph import tracing
from graph.port import Store
from tests.mcp.scenario import (
    MIRA_EPISODES,
    QUESTION,
    add_mira,
    check_bad_input,
    check_mira,
    check_tools,
    ok,
    refused,
)

Body = Callable[[Client], Awaitable[Any]]


def _call(url: str, key: str, body: Body, *, query: str = "") -> Any:
    async def main() -> Any:
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120)) as http:
            transport = streamable_http_client(f"{url}/mcp{query}", http_client=http)
            async with Client(transport) as client:
                return await body(client)

    return anyio.run(main)


def test_http_tenants_are_chosen_by_key_and_isolated(
    store: Store, tenant: str, other_tenant: str
) -> None:
    a, b = tenant, other_tenant
    ka, kb, root = (f"{n}-{uuid.uuid4().hex}" for n in ("ka", "kb", "root"))
    settings = Settings(
        host="127.0.0.1",
        port=0,
        api_keys=f"{a}:{ka},{b}:{kb},*:{root}",
        log_level="warning",
        workers=0,
    )
    with running(settings, store=store) as url:
        # B's memory: Mira's story, through B's key.
        async def seed_b(client: Client) -> dict[str, str]:
            await check_tools(client)
            ids = await add_mira(client)
            await check_mira(client)
            await check_bad_input(client)
            return ids

        b_facts: dict[str, str] = _call(url, kb, seed_b)

        # A's key: nothing of B anywhere, and B's ids are "not found" exactly as on REST.
        async def look_from_a(client: Client) -> list[tuple[str, dict[str, Any]]]:
            found = ok(await client.call_tool("search", {"query": "Mira passport deadline"}))
            assert found["results"] == []
            context = ok(await client.call_tool("get_context", {"question": QUESTION}))
            assert context["facts"] == []
            assert context["episodes"] == []
            assert "2026" not in context["text"]
            facts = ok(await client.call_tool("get_facts", {"subject": "mira"}))
            assert facts["facts"] == []
            history = ok(
                await client.call_tool(
                    "get_history", {"subject": "mira", "predicate": "passport_deadline"}
                )
            )
            assert history["facts"] == []
            return [
                (
                    "get_neighbors",
                    refused(await client.call_tool("get_neighbors", {"entity_id": "mira"})),
                ),
                (
                    "retract_fact",
                    refused(await client.call_tool("retract_fact", {"fact_id": b_facts["e2"]})),
                ),
                (
                    "delete_episode",
                    refused(await client.call_tool("delete_episode", {"episode_id": "e2"})),
                ),
            ]

        refusals = dict(_call(url, ka, look_from_a))
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ka}"}) as rest:
            own = f"/v1/tenants/{a}"
            same = {
                "get_neighbors": rest.get(f"{own}/entities/mira/neighbors"),
                "retract_fact": rest.post(f"{own}/facts/{b_facts['e2']}/retract"),
                "delete_episode": rest.delete(f"{own}/episodes/e2"),
            }
            for tool, answer in same.items():
                assert answer.status_code == 404, answer.text
                assert refusals[tool]["status"] == 404
                assert refusals[tool]["detail"] == answer.json()["detail"], tool
            # B's data is untouched by what A tried.
            b_now = rest.get(
                f"/v1/tenants/{b}/facts",
                params={"subject": "mira"},
                headers={"Authorization": f"Bearer {kb}"},
            ).json()
            assert [f["value"] for f in b_now["facts"]] == ["2026-06-30"]

            # Before the transport: the same problems as REST's for a foreign tenant, no
            # key and an unknown key; the admin key must name the tenant.
            init = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            foreign = rest.post(f"/mcp?tenant={b}", json=init)
            assert foreign.status_code == 404
            assert foreign.json()["detail"] == rest.get(f"/v1/tenants/{b}/facts").json()["detail"]
            assert rest.post("/mcp", json=init, headers={"Authorization": ""}).status_code == 401
            unknown = rest.post("/mcp", json=init, headers={"Authorization": "Bearer nope"})
            assert (unknown.status_code, unknown.json()["detail"]) == (401, "unknown API key")
            admin = rest.post("/mcp", json=init, headers={"Authorization": f"Bearer {root}"})
            assert admin.status_code == 422
            assert admin.json()["errors"][0]["field"] == "tenant"
            assert admin.headers["X-Request-ID"] == admin.json()["request_id"]
            huge = rest.post("/mcp", content=b"[" + b" " * (4 * 1024 * 1024 + 1) + b"]")
            assert (huge.status_code, huge.json()["limit"]) == (413, 4 * 1024 * 1024)

        # The admin key names the tenant it works on; A's own ?tenant=A is accepted too.
        async def read_b(client: Client) -> None:
            now = ok(await client.call_tool("get_context", {"question": QUESTION}))
            assert [f["value"] for f in now["facts"]] == ["2026-06-30"]

        _call(url, root, read_b, query=f"?tenant={b}")

        async def write_a(client: Client) -> None:
            ok(await client.call_tool("add_episode", MIRA_EPISODES[0]))
            facts = ok(await client.call_tool("get_facts", {"subject": "mira"}))
            assert [(f["tenant_id"], f["value"]) for f in facts["facts"]] == [(a, "2026-07-15")]

        _call(url, ka, write_a, query=f"?tenant={a}")

        # A too-large argument is a tool error naming it, over HTTP as over stdio.
        async def huge(client: Client) -> None:
            p = refused(
                await client.call_tool(
                    "add_episode",
                    {"content": "y" * (2 * 1024 * 1024), "occurred_at": "2026-06-01T09:00:00Z"},
                )
            )
            assert p["status"] == 413
            assert "'content'" in p["detail"]
            assert len(p["request_id"]) == 32
            ok(await client.call_tool("get_schema", {}))  # and the server goes on

        _call(url, ka, huge)

        # /metrics counts the MCP requests by their route, with no tenant in the labels.
        with httpx.Client(base_url=url) as anon:
            text = anon.get("/metrics").text
            assert 'route="/mcp"' in text
            assert a not in text
            assert b not in text


def test_a_tool_call_over_http_is_one_trace(sqlite_store: Store, tenant: str) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.enable(provider)
    try:
        settings = Settings(
            host="127.0.0.1", port=0, api_keys=f"{tenant}:k", log_level="warning", workers=0
        )
        with running(settings, store=sqlite_store) as url:

            async def read(client: Client) -> None:
                ok(await client.call_tool("get_facts", {"subject": "mira"}))

            _call(url, "k", read)
    finally:
        tracing.disable()
        provider.shutdown()
    finished = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in finished}
    [tool] = [s for s in finished if s.name == "mcp.tool"]
    chain = []
    parent = tool.parent
    while parent is not None and parent.span_id in by_id:
        chain.append(by_id[parent.span_id].name)
        parent = by_id[parent.span_id].parent
    assert chain == ["POST /mcp"]
    assert tool.attributes is not None
    assert (tool.attributes["mcp.tool.name"], tool.attributes["sgam.tenant"]) == (
        "get_facts",
        tenant,
    )
    [facts] = [s for s in finished if s.name == "memory.facts"]
    assert facts.parent is not None
    assert facts.parent.span_id == tool.context.span_id
    stores = [s for s in finished if s.name == "store.query"]
    assert stores
    assert all(s.parent is not None and s.parent.span_id == facts.context.span_id for s in stores)
