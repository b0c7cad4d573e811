"""What the commands print: ``--json`` is the REST API's document; tables are rich on a
terminal and plain text (no ANSI) otherwise; every memory command documents its exit
status and its options."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import pytest

from api.cli import app
from api.cli.output import Note, Table, view, write
from api.schemas import FactHistory
from api.server import running
from api.settings import Settings
from graph import open_store
from graph.model import Fact
from tests.cli.conftest import FACT_COLUMNS, Sgam, scenario

AS_OF = "2026-06-02T00:00:00Z"


def test_json_is_the_document_the_rest_api_returns(sgam: Sgam, tmp_path: Path, tenant: str) -> None:
    """The same store, asked in-process by the CLI and over HTTP by plain httpx."""
    url = f"sqlite:///{tmp_path}/same.db"
    assert sgam("replay", str(scenario(tmp_path, tenant)), "--store", url).code == 0
    known_at = "2026-12-01T00:00:00Z"  # fixed: an answer depends on when it is asked
    reads = [
        (
            ["facts", "--subject", "mira", "--as-of", AS_OF, "--known-at", known_at],
            "/facts",
            {"subject": "mira", "as_of": AS_OF, "known_at": known_at},
        ),
        (
            ["history", "--subject", "mira", "--predicate", "passport_deadline"],
            "/facts/history",
            {"subject": "mira", "predicate": "passport_deadline"},
        ),
        (["entity", "mira", "--as-of", AS_OF], "/entities/mira", {"as_of": AS_OF}),
        (["neighbors", "mira"], "/entities/mira/neighbors", {}),
        (["episodes", "get", "e1"], "/episodes/e1", {}),
        (["schema", "get"], "/schema", {}),
    ]
    cli = {
        path: sgam(*argv, "--store", url, "--tenant", tenant, "--json").json()
        for argv, path, _ in reads
    }
    store = open_store(url)
    try:
        with running(Settings(port=0, log_level="warning", workers=0), store=store) as base:
            for _, path, params in reads:
                rest = httpx.get(f"{base}/v1/tenants/{tenant}{path}", params=params)
                assert rest.status_code == 200, rest.text
                assert cli[path] == rest.json(), path
    finally:
        store.close()


def _fact(value: str, valid_to: str | None) -> Fact:
    return Fact.model_validate(
        {
            "tenant_id": "acme",
            "fact_id": f"f_{value}",
            "version_id": "v1",
            "subject": "mira",
            "subject_type": "Person",
            "predicate": "passport_deadline",
            "value": value,
            "value_type": "date",
            "valid_from": "2026-06-01T09:00:00Z",
            "valid_to": valid_to,
            "recorded_at": "2026-06-01T09:00:01Z",
            "source_episode_id": "e1",
            "confidence": 1.0,
            "memory_type": "semantic",
            "schema_version": 0,
            "retention_policy": "keep",
            "cardinality": "one",
        }
    )


def test_plain_tables_align_and_carry_no_ansi() -> None:
    answer = FactHistory(facts=[_fact("2026-07-15", "2026-06-03T10:00:00Z"), _fact("x", None)])
    out, err = io.StringIO(), io.StringIO()
    write(view(answer), out, err, terminal=False)
    lines = out.getvalue().splitlines()
    assert "\x1b[" not in out.getvalue()
    assert lines[0].split() == list(FACT_COLUMNS)
    # Columns line up: each starts where its header does.
    start = lines[0].index("valid_to")
    assert lines[1][start:].startswith("2026-06-03T10:00:00Z")
    assert lines[2][start:].startswith("∞")
    assert all(line == line.rstrip() for line in lines)
    assert err.getvalue() == ""


def test_a_terminal_gets_rich_tables_and_notes_go_to_stderr() -> None:
    out, err = io.StringIO(), io.StringIO()
    blocks = [Table(("value", "source"), [["2026-07-15", "e1"]], "facts"), Note("more: --cursor c")]
    write(blocks, out, err, terminal=True)
    text = out.getvalue()
    assert "\x1b[" in text  # styled
    assert "╭" in text
    assert "│ 2026-07-15 │ e1     │" in text
    assert err.getvalue() == "more: --cursor c\n"


MEMORY_COMMANDS = [
    ["facts"],
    ["history"],
    ["retract"],
    ["entity"],
    ["neighbors"],
    ["search"],
    ["context"],
    ["episodes", "add"],
    ["episodes", "get"],
    ["episodes", "delete"],
    ["episodes", "retry"],
    ["schema", "get"],
    ["schema", "put"],
]


@pytest.mark.parametrize("command", MEMORY_COMMANDS, ids=" ".join)
def test_every_memory_command_documents_its_options_and_exit_status(
    sgam: Sgam, command: list[str]
) -> None:
    r = sgam(*command, "--help")
    assert r.code == 0
    text = " ".join(r.out.split())  # rich wraps the help to the terminal's width
    for option in ("--store", "--api", "--key", "--tenant", "--json"):
        assert option in text
    for variable in ("SGAM_STORE_URL", "SGAM_API_URL", "SGAM_API_KEY", "SGAM_TENANT"):
        assert variable in text
    assert "Exit status: 0 ok; 1 not found or refused by the service" in text
    assert "2 usage error, unreadable input, or the store or API cannot be reached" in text


def test_every_command_is_listed() -> None:
    names = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    assert names == {
        "serve",
        "worker",
        "replay",
        "facts",
        "history",
        "retract",
        "entity",
        "neighbors",
        "search",
        "context",
        "episodes",
        "schema",
        "import",
        "export",
        "forget",
        "tenant",
        "purge",
    }
