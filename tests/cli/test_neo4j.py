"""The command line in-process on a real Neo4j (``--store bolt://...``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graph.port import Store
from tests.cli.conftest import Sgam, scenario


@pytest.mark.neo4j
def test_replay_then_ask_on_neo4j(
    sgam: Sgam, neo4j_uri: str, neo4j_store: Store, tmp_path: Path, tenant: str
) -> None:
    where = ("--store", neo4j_uri, "--tenant", tenant)
    deadline = ("--subject", "mira", "--predicate", "passport_deadline")
    try:
        replayed = sgam("replay", str(scenario(tmp_path, tenant)), "--store", neo4j_uri)
        assert replayed.code == 0, replayed.out + replayed.err
        then: Any = sgam("facts", *deadline, "--as-of", "2026-06-02T00:00:00Z", "--json", *where)
        assert [(f["value"], f["source_episode_id"]) for f in then.json()["facts"]] == [
            ("2026-07-15", "e1")
        ]
        history: Any = sgam("history", *deadline, "--json", *where).json()
        assert [f["source_episode_id"] for f in history["facts"]] == ["e0", "e1", "e2"]
        gone = sgam("episodes", "get", "nope", *where)
        assert (gone.code, gone.err) == (1, "sgam: Not found: episode 'nope' not found\n")
    finally:
        neo4j_store.purge_tenant(tenant_id=tenant)
