"""An MCP session with sgam, as an agent would hold it, printed as a transcript.

Starts ``sgam mcp`` over stdio on a fresh SQLite file (or the store URL given), lists the
tools, records Mira's three episodes with the facts they state, and asks for context now
and as of 2 June 2026::

    .venv/bin/python examples/mcp_session.py [--store URL] [--tenant T]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

EPISODES = [
    (
        "e1",
        "2026-06-01T09:00:00Z",
        "Mira prefers concise answers. Her passport deadline is 2026-07-15.",
        "2026-07-15",
    ),
    (
        "e2",
        "2026-06-03T10:00:00Z",
        "Mira corrected the deadline. It is now 2026-06-30.",
        "2026-06-30",
    ),
    ("e0", "2026-05-30T08:00:00Z", "Mira's passport deadline is 2026-08-01.", "2026-08-01"),
]
QUESTION = "When is Mira's passport deadline?"


def show(tool: str, arguments: dict[str, Any]) -> None:
    print(f"\n→ {tool} {json.dumps(arguments, ensure_ascii=False)}")


async def session(store: str, tenant: str) -> None:
    sgam = str(Path(sys.executable).with_name("sgam"))
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", SGAM_WORKERS="0")
    params = StdioServerParameters(
        command=sgam, args=["mcp", "--store", store, "--tenant", tenant], env=env
    )
    print(f"$ sgam mcp --store {store} --tenant {tenant}")
    async with Client(params, read_timeout_seconds=300) as client:
        info = client.server_info
        print(f"connected: {info.name if info else '?'} {info.version if info else ''}")
        print("\n→ tools/list")
        for t in (await client.list_tools()).tools:
            a = t.annotations
            kind = (
                "read-only"
                if a and a.read_only_hint
                else "destructive"
                if a and a.destructive_hint
                else "write"
            )
            print(f"  {t.name:<15} {kind:<12} {t.title}")
        for episode_id, occurred_at, content, value in EPISODES:
            arguments = {
                "episode_id": episode_id,
                "session_id": "mira-chat",
                "occurred_at": occurred_at,
                "content": content,
                "facts": [
                    {
                        "subject": "mira",
                        "subject_type": "Person",
                        "predicate": "passport_deadline",
                        "value": value,
                    }
                ],
            }
            show("add_episode", arguments)
            result = await client.call_tool("add_episode", arguments)
            data = result.structured_content or {}
            created = "created" if data.get("created") else "already there"
            print(f"  ← episode {data.get('episode_id')}: {created}")
            for f in data.get("facts", []):
                what = f"{f['subject']}.{f['predicate']} = {f['value']}"
                print(f"  ← fact {what}, valid from {f['valid_from']}")
        for arguments in (
            {"question": QUESTION},
            {"question": QUESTION, "as_of": "2026-06-02T00:00:00Z"},
        ):
            show("get_context", arguments)
            result = await client.call_tool("get_context", arguments)
            for line in result.content[0].text.splitlines():  # type: ignore[union-attr]
                print(f"  ← {line}")
            cited = [
                (f["value"], f["source_episode_id"])
                for f in (result.structured_content or {})["facts"]
            ]
            print(f"  ← cited facts: {cited}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", default=None, help="store URL (default: a new SQLite file)")
    p.add_argument("--tenant", default="acme")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or f"sqlite:///{Path(tmp) / 'mira.db'}"
        anyio.run(session, store, args.tenant)


if __name__ == "__main__":
    main()
