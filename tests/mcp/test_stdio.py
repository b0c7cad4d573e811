"""``sgam mcp`` as an MCP client starts it: a subprocess over stdio, driven by the SDK's
client, on an SQLite file and on the real Neo4j."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from graph.stores import open_store
from tests.mcp.scenario import add_mira, check_bad_input, check_mira, check_tools, ok

SGAM = str(Path(sys.executable).with_name("sgam"))  # the installed entry point


def _env() -> dict[str, str]:
    # The SDK passes only a small whitelist of variables by default; the server needs the
    # import path (this worktree) and the offline flags of the embedding model.
    keep = ("PATH", "HOME", "PYTHONPATH", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HOME")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", SGAM_WORKERS="0")
    return env


def _session(store_url: str, tenant: str) -> None:
    params = StdioServerParameters(
        command=SGAM, args=["mcp", "--store", store_url, "--tenant", tenant], env=_env()
    )

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            assert client.server_info is not None
            assert client.server_info.name == "sgam"
            assert "get_context" in (client.instructions or "")
            await check_tools(client)
            await add_mira(client)
            await check_mira(client)
            await check_bad_input(client)
            # One tenant per process: what it wrote is in its tenant, nowhere else.
            facts = ok(await client.call_tool("get_facts", {"subject": "mira"}))
            assert {f["tenant_id"] for f in facts["facts"]} == {tenant}

    anyio.run(main)


def test_stdio_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'mcp.db'}"
    _session(url, "acme")
    store = open_store(url)  # what the subprocess wrote is in the file, for acme only
    try:
        assert store.get_episode(tenant_id="acme", episode_id="e2") is not None
        assert store.get_episode(tenant_id="other", episode_id="e2") is None
    finally:
        store.close()


@pytest.mark.neo4j
def test_stdio_on_neo4j(neo4j_uri: str, tenant: str) -> None:
    try:
        _session(neo4j_uri, tenant)
    finally:
        store = open_store(neo4j_uri)
        store.purge_tenant(tenant_id=tenant)
        store.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tenant", "Not A Tenant"], "is not a tenant id"),
        (["--tenant", "acme", "--store", "mysql://x/y"], "cannot open the store 'mysql://x/y'"),
        ([], "name the tenant"),
    ],
)
def test_stdio_refuses_bad_arguments_in_one_line(args: list[str], message: str) -> None:
    env = {k: v for k, v in _env().items() if k != "SGAM_TENANT"}
    done = subprocess.run(
        [SGAM, "mcp", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env=env,
        check=False,
    )
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stderr.strip().count("\n") == 0  # one line, no traceback
    assert done.stdout == ""
