"""``sgam forget``, ``sgam tenant delete`` and ``sgam purge``, in-process and over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

from api.local import LocalClient
from tests.cli.conftest import Memory, Sgam


def test_forget_previews_then_erases_mira(sgam: Sgam, memory: Memory) -> None:
    # The whole ledger in-process; over HTTP a server exports current facts only.
    kind = "--ledger" if "--store" in memory.where else "--current"
    ledger = sgam(*memory.args("export", kind))
    assert ledger.code == 0, ledger.err
    assert '"mira"' in ledger.out
    preview = sgam(*memory.args("forget", "mira", "--dry-run", "--json")).json()
    assert isinstance(preview, dict)
    assert preview["dry_run"] is True
    assert preview["entities"] == 1
    assert preview["episodes"] >= 1
    assert preview["facts"] >= 1
    still = sgam(*memory.args("facts", "--subject", "mira", "--json")).json()
    assert isinstance(still, dict)
    assert still["facts"]  # the preview deleted nothing

    done = sgam(*memory.args("forget", "mira", "--json")).json()
    assert done == {**preview, "dry_run": False}
    gone = sgam(*memory.args("facts", "--subject", "mira", "--json")).json()
    assert gone == {"facts": [], "next_cursor": None}
    ledger = sgam(*memory.args("export", kind))
    assert ledger.code == 0, ledger.err
    assert "mira" not in ledger.out
    again = sgam(*memory.args("forget", "mira"))
    assert again.code == 1
    assert "not found" in again.err


def test_tenant_delete_needs_yes_and_the_admin(sgam: Sgam, memory: Memory) -> None:
    refused = sgam("tenant", "delete", memory.tenant, *memory.where)
    assert refused.code == 2
    assert "--yes" in refused.err
    result = sgam("tenant", "delete", memory.tenant, "--yes", "--json", *memory.where)
    if "--api" in memory.where:  # the server's key is the tenant's own, not the admin's
        assert result.code == 1
        assert "admin key" in result.err
        return
    assert result.json() == {"tenant_id": memory.tenant, "erased": True}
    facts = sgam(*memory.args("facts", "--json")).json()
    assert facts == {"facts": [], "next_cursor": None}


def test_purge_applies_the_schema_retention(sgam: Sgam, tmp_path: Path, tenant: str) -> None:
    url = f"sqlite:///{tmp_path}/purge.db"
    with LocalClient.open(url) as c:
        c.put_schema(
            tenant, {"predicates": [{"name": "note", "value_type": "string", "retention": "P30D"}]}
        )
        c.create_episode(
            tenant,
            {
                "episode_id": "e1",
                "content": "old notes",
                "occurred_at": "2020-01-01T00:00:00Z",
                "facts": [
                    {
                        "subject": "mira",
                        "predicate": "note",
                        "value": "old",
                        "valid_to": "2020-02-01T00:00:00Z",
                    },
                    {"subject": "ann", "predicate": "note", "value": "open"},
                ],
            },
        )
    dry = sgam("purge", "--store", url, "--tenant", tenant, "--dry-run")
    assert dry.code == 0, dry.err
    assert json.loads(dry.out) == {
        "tenant_id": tenant,
        "dry_run": True,
        "facts": 1,
        "versions": 1,
        "assertions": 1,
        "episodes": 0,
    }
    done = sgam("purge", "--store", url)
    assert done.code == 0, done.err
    assert [json.loads(line) for line in done.out.splitlines()] == [
        {
            "tenant_id": tenant,
            "dry_run": False,
            "facts": 1,
            "versions": 1,
            "assertions": 1,
            "episodes": 0,
        }
    ]
    notes = sgam(
        "facts",
        "--predicate",
        "note",
        "--as-of",
        "2020-01-15T00:00:00Z",
        "--json",
        "--store",
        url,
        "--tenant",
        tenant,
    ).json()
    assert isinstance(notes, dict)
    assert [f["value"] for f in notes["facts"]] == ["open"]
    missing = sgam("purge", "--store", f"sqlite:///{tmp_path}/nothing.db")
    assert missing.code == 2
    assert "does not exist" in missing.err
