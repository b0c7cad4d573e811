"""What the MCP tests share: the tool table they expect, Mira's story, and its checks.

Mira's story (the seed example): her passport deadline was 2026-07-15 (episode e1),
corrected to 2026-06-30 (e2); a late message (e0) about an even earlier value slots in
before both. Asked now, only 2026-06-30 holds; asked as of 2 June, only 2026-07-15.
"""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.types import CallToolResult

# name: (readOnlyHint, destructiveHint, idempotentHint)
EXPECTED_TOOLS = {
    "add_episode": (False, False, False),
    "add_facts": (False, False, True),
    "search": (True, False, True),
    "get_context": (True, False, True),
    "get_facts": (True, False, True),
    "get_history": (True, False, True),
    "get_neighbors": (True, False, True),
    "retract_fact": (False, True, False),
    "delete_episode": (False, True, True),
    "get_schema": (True, False, True),
}

MIRA_EPISODES: list[dict[str, Any]] = [
    {
        "episode_id": "e1",
        "session_id": "mira-chat",
        "occurred_at": "2026-06-01T09:00:00Z",
        "content": "Mira prefers concise answers. Her passport deadline is 2026-07-15.",
        "facts": [
            {
                "subject": "mira",
                "subject_type": "Person",
                "predicate": "passport_deadline",
                "value": "2026-07-15",
            }
        ],
    },
    {
        "episode_id": "e2",
        "session_id": "mira-chat",
        "occurred_at": "2026-06-03T10:00:00Z",
        "content": "Mira corrected the deadline. It is now 2026-06-30.",
        "facts": [
            {
                "subject": "mira",
                "subject_type": "Person",
                "predicate": "passport_deadline",
                "value": "2026-06-30",
            }
        ],
    },
    {
        "episode_id": "e0",
        "session_id": "mira-chat",
        "occurred_at": "2026-05-30T08:00:00Z",
        "content": "Mira's passport deadline is 2026-08-01.",
        "facts": [
            {
                "subject": "mira",
                "subject_type": "Person",
                "predicate": "passport_deadline",
                "value": "2026-08-01",
            }
        ],
    },
]
DEADLINES = {"e0": "2026-08-01", "e1": "2026-07-15", "e2": "2026-06-30"}
QUESTION = "When is Mira's passport deadline?"


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured answer of a successful call."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def refused(result: CallToolResult) -> dict[str, Any]:
    """The problem of a refused call; its text is the problem's detail."""
    assert result.is_error, result.structured_content
    problem = result.structured_content
    assert problem is not None
    assert problem["type"].startswith("urn:sgam:problem:")
    assert result.content[0].type == "text"
    assert result.content[0].text == problem["detail"]
    return problem


async def check_tools(client: Client) -> None:
    listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == list(EXPECTED_TOOLS)
    for tool in listed:
        a = tool.annotations
        assert a is not None
        hints = (a.read_only_hint, a.destructive_hint, a.idempotent_hint)
        assert hints == EXPECTED_TOOLS[tool.name], tool.name
        assert a.open_world_hint is False
        assert tool.input_schema["type"] == "object"
        assert tool.description
        assert len(tool.description) > 60
    schemas = {t.name: t.input_schema for t in listed}
    assert schemas["add_episode"]["required"] == ["content", "occurred_at"]
    assert set(schemas["add_episode"]["properties"]) >= {
        "content",
        "occurred_at",
        "episode_id",
        "session_id",
        "facts",
        "extract",
    }
    assert schemas["add_facts"]["properties"]["facts"]["maxItems"] == 1000
    assert schemas["get_history"]["required"] == ["subject", "predicate"]
    assert schemas["get_neighbors"]["properties"]["depth"]["maximum"] == 4


async def add_mira(client: Client) -> dict[str, str]:
    """Record the three episodes; return episode id → fact id of the deadline it stated."""
    fact_ids: dict[str, str] = {}
    for episode in MIRA_EPISODES:
        written = ok(await client.call_tool("add_episode", episode))
        assert written["created"] is True
        assert written["episode_id"] == episode["episode_id"]
        [fact] = written["facts"]
        assert (fact["subject"], fact["predicate"], fact["value"]) == (
            "mira",
            "passport_deadline",
            DEADLINES[episode["episode_id"]],
        )
        assert fact["source_episode_id"] == episode["episode_id"]
        assert fact["valid_from"] == episode["occurred_at"]
        fact_ids[episode["episode_id"]] = fact["fact_id"]
    return fact_ids


async def check_mira(client: Client) -> None:
    """get_context now and as of 2 June, get_facts and get_history: values, not shapes."""
    now = ok(await client.call_tool("get_context", {"question": QUESTION}))
    assert "2026-06-30" in now["text"]
    assert "2026-07-15" not in now["text"]
    assert "2026-08-01" not in now["text"]
    assert [(f["value"], f["source_episode_id"]) for f in now["facts"]] == [("2026-06-30", "e2")]

    then = ok(
        await client.call_tool(
            "get_context", {"question": QUESTION, "as_of": "2026-06-02T00:00:00Z"}
        )
    )
    assert "2026-07-15" in then["text"]
    assert "2026-06-30" not in then["text"]
    assert "2026-08-01" not in then["text"]
    assert [(f["value"], f["source_episode_id"]) for f in then["facts"]] == [("2026-07-15", "e1")]

    facts = ok(
        await client.call_tool(
            "get_facts",
            {"subject": "mira", "predicate": "passport_deadline", "as_of": "2026-05-31T00:00:00Z"},
        )
    )
    assert [f["value"] for f in facts["facts"]] == ["2026-08-01"]
    assert facts["next_cursor"] is None

    history = ok(
        await client.call_tool("get_history", {"subject": "mira", "predicate": "passport_deadline"})
    )
    assert [(f["valid_from"], f["valid_to"], f["source_episode_id"]) for f in history["facts"]] == [
        ("2026-05-30T08:00:00Z", "2026-06-01T09:00:00Z", "e0"),
        ("2026-06-01T09:00:00Z", "2026-06-03T10:00:00Z", "e1"),
        ("2026-06-03T10:00:00Z", None, "e2"),
    ]


async def check_bad_input(client: Client) -> None:
    """Refusals name the argument; the server keeps serving afterwards."""
    p = refused(await client.call_tool("no_such_tool", {}))
    assert p["status"] == 404
    assert "'no_such_tool'" in p["detail"]
    assert "get_context" in p["detail"]
    p = refused(await client.call_tool("add_episode", {"content": "hello"}))
    assert (p["status"], p["detail"]) == (422, "occurred_at: Field required")
    p = refused(await client.call_tool("get_facts", {"subject": "mira", "limit": "many"}))
    assert p["status"] == 422
    assert p["detail"].startswith("limit: ")
    assert p["errors"] == [
        {
            "field": "limit",
            "reason": "Input should be a valid integer, unable to parse string as an integer",
            "location": "arguments",
        }
    ]
    p = refused(await client.call_tool("get_facts", {"subject": "mira", "color": "red"}))
    assert (p["status"], p["detail"]) == (422, "color: Extra inputs are not permitted")
    p = refused(
        await client.call_tool(
            "add_facts", {"facts": [{"subject": "mira", "predicate": "Passport Deadline"}]}
        )
    )
    assert p["status"] == 422
    assert p["errors"][0]["index"] == 0
    assert p["errors"][0]["field"] == "predicate"
    p = refused(
        await client.call_tool(
            "add_episode",
            {"content": "x" * (1024 * 1024 + 1), "occurred_at": "2026-06-01T09:00:00Z"},
        )
    )
    assert p["status"] == 413
    assert p["detail"].startswith("argument 'content' is too large")
    p = refused(await client.call_tool("retract_fact", {"fact_id": "fact-that-is-not-there"}))
    assert (p["status"], p["detail"]) == (404, "fact 'fact-that-is-not-there' not found")
    # Still serving.
    schema = ok(await client.call_tool("get_schema", {}))
    assert schema["version"] == 0
