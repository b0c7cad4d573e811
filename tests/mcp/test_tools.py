"""The tools in process (the SDK's client on the server object), on both stores: the
answers, the refusals, and that both are the REST API's own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from api.app import create_app
from api.mcp import Services, SgamMcp
from api.metrics import Metrics
from api.settings import Settings
from graph.port import Store
from graph.service import MemoryService
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


def _run(store: Store, tenant: str, body: Callable[[Client], Awaitable[None]]) -> None:
    settings = Settings()
    mcp = SgamMcp(
        Services(service=MemoryService(store), metrics=Metrics(), settings=settings),
        tenant_of=lambda _: tenant,
        max_argument_bytes=settings.max_body_bytes,
    )

    async def main() -> None:
        async with Client(mcp.server) as client:
            await body(client)

    anyio.run(main)


def test_tools_mira_and_bad_input(store: Store, tenant: str) -> None:
    async def body(client: Client) -> None:
        await check_tools(client)
        await add_mira(client)
        await check_mira(client)
        await check_bad_input(client)

    _run(store, tenant, body)


def test_writes_reads_and_repairs(store: Store, tenant: str) -> None:
    async def body(client: Client) -> None:
        ids = await add_mira(client)
        # The same episode again records nothing.
        again = ok(await client.call_tool("add_episode", MIRA_EPISODES[0]))
        assert again["created"] is False
        assert [f["fact_id"] for f in again["facts"]] == [ids["e1"]]
        # Facts with an object make a graph: mira → acme_travel.
        written = ok(
            await client.call_tool(
                "add_facts",
                {
                    "facts": [
                        {
                            "subject": "mira",
                            "predicate": "books_with",
                            "object": "acme_travel",
                            "object_type": "Company",
                            "valid_from": "2026-06-01T09:00:00Z",
                            "source_episode_id": "e1",
                        }
                    ]
                },
            )
        )
        assert written["outcomes"] == ["created"]
        hood = ok(await client.call_tool("get_neighbors", {"entity_id": "mira", "depth": 1}))
        assert {e["entity_id"] for e in hood["entities"]} == {"mira", "acme_travel"}
        assert [f["predicate"] for f in hood["facts"]] == ["books_with"]  # edges only
        found = ok(await client.call_tool("search", {"query": "Mira passport deadline"}))
        deadlines = [
            r["item"]["value"]
            for r in found["results"]
            if r["kind"] == "fact" and r["item"]["predicate"] == "passport_deadline"
        ]
        assert deadlines == ["2026-06-30"]  # only what is valid now
        # Deleting e2 repairs the timeline: e1's value is current again.
        deleted = ok(await client.call_tool("delete_episode", {"episode_id": "e2"}))
        assert (deleted["facts_removed"], deleted["facts_restored"]) == (1, 1)
        now = ok(await client.call_tool("get_context", {"question": QUESTION}))
        deadline = [f["value"] for f in now["facts"] if f["predicate"] == "passport_deadline"]
        assert deadline == ["2026-07-15"]
        # Retracting ends it without a replacement.
        retracted = ok(
            await client.call_tool(
                "retract_fact", {"fact_id": ids["e1"], "valid_to": "2026-06-20T00:00:00Z"}
            )
        )
        assert retracted["valid_to"] == "2026-06-20T00:00:00Z"
        facts = ok(
            await client.call_tool(
                "get_facts", {"subject": "mira", "predicate": "passport_deadline"}
            )
        )
        assert facts["facts"] == []
        # A conflict is refused with the REST problem's members.
        clash = refused(
            await client.call_tool(
                "add_facts",
                {
                    "facts": [
                        {
                            "subject": "mira",
                            "predicate": "passport_deadline",
                            "value": "2026-09-09",
                            "valid_from": "2026-06-01T09:00:00Z",
                            "source_episode_id": "e0",
                        }
                    ]
                },
            )
        )
        assert clash["status"] == 409
        assert (clash["conflicting_fact_id"], clash["conflicting_source_episode_id"]) == (
            ids["e1"],
            "e1",
        )

    _run(store, tenant, body)


# Inputs refused by a route and by the tool that calls the same service: (method, path,
# body or query, tool, arguments).
SAME_REFUSALS: list[tuple[str, str, dict[str, Any], str, dict[str, Any]]] = [
    (
        "POST",
        "/facts",
        {"facts": [{"subject": "mira", "predicate": "Bad Name", "value": 1}]},
        "add_facts",
        {"facts": [{"subject": "mira", "predicate": "Bad Name", "value": 1}]},
    ),
    (
        "POST",
        "/episodes",
        {"content": "no time"},
        "add_episode",
        {"content": "no time"},
    ),
    (
        "POST",
        "/episodes",
        {"content": "late", "occurred_at": "2026-06-01T09:00:00"},
        "add_episode",
        {"content": "late", "occurred_at": "2026-06-01T09:00:00"},
    ),
    ("POST", "/facts/nope/retract", {}, "retract_fact", {"fact_id": "nope"}),
    ("DELETE", "/episodes/nope", {}, "delete_episode", {"episode_id": "nope"}),
    ("GET", "/entities/nope/neighbors", {}, "get_neighbors", {"entity_id": "nope"}),
    ("GET", "/facts", {"limit": 5000}, "get_facts", {"limit": 5000}),
    ("GET", "/facts", {"cursor": "garbage"}, "get_facts", {"cursor": "garbage"}),
    ("POST", "/search", {"query": ""}, "search", {"query": ""}),
    (
        "POST",
        "/facts",
        {
            "facts": [{"subject": "mira", "predicate": "deadline", "value": "2026-07-01"}] * 2
            + [{"subject": "mira", "predicate": "deadline", "value": "2026-07-02"}]
        },
        "add_facts",
        {
            "facts": [{"subject": "mira", "predicate": "deadline", "value": "2026-07-01"}] * 2
            + [{"subject": "mira", "predicate": "deadline", "value": "2026-07-02"}]
        },
    ),
]


@pytest.mark.parametrize(("method", "path", "payload", "tool", "arguments"), SAME_REFUSALS)
def test_a_refusal_carries_the_rest_detail(
    store: Store,
    tenant: str,
    method: str,
    path: str,
    payload: dict[str, Any],
    tool: str,
    arguments: dict[str, Any],
) -> None:
    with TestClient(create_app(Settings(), store=store)) as rest:
        url = f"/v1/tenants/{tenant}{path}"
        if method == "GET":
            answer = rest.get(url, params=payload)
        else:
            answer = rest.request(method, url, json=payload or None)
        assert answer.status_code in (404, 409, 422), answer.text
        expected = answer.json()

    async def body(client: Client) -> None:
        problem = refused(await client.call_tool(tool, arguments))
        assert problem["detail"] == expected["detail"]
        assert (problem["status"], problem["type"]) == (expected["status"], expected["type"])
        strip = [
            {k: v for k, v in e.items() if k != "location"} for e in expected.get("errors", [])
        ]
        assert [
            {k: v for k, v in e.items() if k != "location"} for e in problem.get("errors", [])
        ] == strip

    _run(store, tenant, body)
