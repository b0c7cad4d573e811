"""Every memory command, in-process (``--store``) and through a server (``--api``), on the
Mira scenario: the answers, by value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli.conftest import FACT_COLUMNS, Memory, Sgam

DEADLINE = ("--subject", "mira", "--predicate", "passport_deadline")


def _values(doc: Any) -> list[tuple[str, str]]:
    return [(f["value"], f["source_episode_id"]) for f in doc["facts"]]


def test_facts_reads_like_the_request_it_makes(sgam: Sgam, memory: Memory) -> None:
    then = sgam(*memory.args("facts", *DEADLINE, "--as-of", "2026-06-02T00:00:00Z", "--json"))
    assert _values(then.json()) == [("2026-07-15", "e1")]
    assert _values(sgam(*memory.args("facts", *DEADLINE, "--json")).json()) == [
        ("2026-06-30", "e2")
    ]
    before = sgam(*memory.args("facts", *DEADLINE, "--as-of", "2026-05-31T00:00:00Z", "--json"))
    assert _values(before.json()) == [("2026-08-01", "e0")]
    # Nothing was known in 2000: the system-time axis.
    known = sgam(*memory.args("facts", *DEADLINE, "--known-at", "2000-01-01T00:00:00Z", "--json"))
    assert known.json() == {"facts": [], "next_cursor": None}

    table = sgam(*memory.args("facts", *DEADLINE, "--as-of", "2026-06-02T00:00:00Z"))
    assert table.code == 0, table.err
    header, row = table.out.splitlines()
    assert header.split() == list(FACT_COLUMNS)
    assert row.split()[1:] == [
        "mira",
        "passport_deadline",
        "2026-07-15",
        "2026-06-01T09:00:00Z",
        "2026-06-03T10:00:00Z",
        "e1",
    ]


def test_facts_page_with_the_cursor(sgam: Sgam, memory: Memory) -> None:
    first = sgam(*memory.args("facts", "--subject", "mira", "--limit", "1", "--json")).json()
    assert isinstance(first, dict)
    assert len(first["facts"]) == 1
    assert first["next_cursor"] is not None
    rest = sgam(
        *memory.args("facts", "--subject", "mira", "--limit", "1", "--cursor", first["next_cursor"])
    )
    assert rest.code == 0, rest.err
    assert "more facts: repeat with --cursor" not in rest.err  # the last page
    assert first["facts"][0]["predicate"] == "knows"  # ordered by (subject, predicate)
    assert "passport_deadline" in rest.out
    plain = sgam(*memory.args("facts", "--subject", "mira", "--limit", "1"))
    assert plain.err.startswith("more facts: repeat with --cursor ")  # a hint, on stderr
    assert plain.out.count("\n") == 2  # the header and one fact


def test_history_lists_every_interval(sgam: Sgam, memory: Memory) -> None:
    doc: Any = sgam(*memory.args("history", *DEADLINE, "--json")).json()
    assert [(f["valid_from"], f["valid_to"], f["source_episode_id"]) for f in doc["facts"]] == [
        ("2026-05-30T08:00:00Z", "2026-06-01T09:00:00Z", "e0"),
        ("2026-06-01T09:00:00Z", "2026-06-03T10:00:00Z", "e1"),
        ("2026-06-03T10:00:00Z", None, "e2"),
    ]
    table = sgam(*memory.args("history", *DEADLINE))
    assert [line.split()[3] for line in table.out.splitlines()[1:]] == [
        "2026-08-01",
        "2026-07-15",
        "2026-06-30",
    ]


def _pages(sgam: Sgam, memory: Memory, *command: str) -> list[list[dict[str, Any]]]:
    """Every page of a paged read at --limit 1, following next_cursor to the end."""
    pages: list[list[dict[str, Any]]] = []
    cursor: tuple[str, ...] = ()
    while True:
        doc: Any = sgam(*memory.args(*command, "--limit", "1", *cursor, "--json")).json()
        pages.append(doc["facts"])
        if doc["next_cursor"] is None:
            return pages
        cursor = ("--cursor", doc["next_cursor"])
        assert len(pages) < 10, "the cursor never ends"


def test_every_paged_read_takes_limit_and_cursor(sgam: Sgam, memory: Memory) -> None:
    history = _pages(sgam, memory, "history", *DEADLINE)
    assert [[f["source_episode_id"] for f in page] for page in history] == [["e0"], ["e1"], ["e2"]]
    episode = _pages(sgam, memory, "episodes", "get", "e1")
    assert sorted(f["predicate"] for page in episode for f in page) == [
        "knows",
        "passport_deadline",
        "works_at",
    ]
    assert {len(page) for page in episode} == {1}
    entity = _pages(sgam, memory, "entity", "mira")
    assert sorted(f["predicate"] for page in entity for f in page) == ["knows", "passport_deadline"]
    # The hint for the next page goes to stderr, on a terminal as in a pipe.
    plain = sgam(*memory.args("history", *DEADLINE, "--limit", "1"))
    assert plain.err.startswith("more versions: repeat with --cursor ")
    # A neighbourhood larger than --limit is refused, never cut.
    cut = sgam(*memory.args("neighbors", "mira", "--depth", "2", "--limit", "1"))
    assert cut.code == 1
    assert "limit" in cut.err
    whole: Any = sgam(*memory.args("neighbors", "mira", "--depth", "2", "--limit", "2", "--json"))
    assert len(whole.json()["facts"]) == 2


def test_entity_and_neighbors(sgam: Sgam, memory: Memory) -> None:
    ann: Any = sgam(*memory.args("entity", "ann", "--json")).json()
    assert ann["entity_id"] == "ann"
    assert sorted((f["subject"], f["predicate"], f["object"]) for f in ann["facts"]) == [
        ("ann", "works_at", "initech"),
        ("mira", "knows", "ann"),
    ]
    hood: Any = sgam(
        *memory.args("neighbors", "mira", "--depth", "2", "--direction", "out", "--json")
    ).json()
    assert sorted(e["entity_id"] for e in hood["entities"]) == ["ann", "initech", "mira"]
    only: Any = sgam(
        *memory.args("neighbors", "mira", "--depth", "2", "--predicates", "knows", "--json")
    ).json()
    assert sorted(e["entity_id"] for e in only["entities"]) == ["ann", "mira"]
    table = sgam(*memory.args("neighbors", "mira", "--depth", "2"))
    assert table.out.startswith("entities:\n")
    assert "initech" in table.out
    assert "\nfacts:\n" in table.out


def test_episodes_add_get_delete(sgam: Sgam, memory: Memory) -> None:
    add = memory.args(
        "episodes",
        "add",
        "--episode-id",
        "e9",
        "--content",
        "Mira moved to Lyon.",
        "--occurred-at",
        "2026-06-05T08:00:00+02:00",
        "--session-id",
        "s1",
        "--json",
    )
    written: Any = sgam(*add).json()
    assert (written["episode_id"], written["created"], written["occurred_at"]) == (
        "e9",
        True,
        "2026-06-05T06:00:00Z",
    )
    assert sgam(*add).json()["created"] is False  # type: ignore[index]
    got: Any = sgam(*memory.args("episodes", "get", "e9", "--json")).json()
    assert (got["content"], got["session_id"], got["status"]) == (
        "Mira moved to Lyon.",
        "s1",
        "stored",
    )
    table = sgam(*memory.args("episodes", "get", "e1"))
    assert "Mira prefers concise answers." in table.out
    assert "2026-07-15" in table.out  # the fact e1 sourced
    deleted: Any = sgam(*memory.args("episodes", "delete", "e9", "--json")).json()
    assert deleted == {"episode_id": "e9", "facts_removed": 0, "facts_restored": 0}
    gone = sgam(*memory.args("episodes", "get", "e9"))
    assert (gone.code, gone.out, gone.err) == (1, "", "sgam: Not found: episode 'e9' not found\n")


def test_deleting_an_episode_restores_what_it_cut(sgam: Sgam, memory: Memory) -> None:
    deleted: Any = sgam(*memory.args("episodes", "delete", "e2", "--json")).json()
    assert (deleted["facts_removed"], deleted["facts_restored"]) == (1, 1)
    now: Any = sgam(*memory.args("facts", *DEADLINE, "--json")).json()
    assert _values(now) == [("2026-07-15", "e1")]


def test_schema_put_and_get(sgam: Sgam, memory: Memory, tmp_path: Path) -> None:
    file = tmp_path / "schema.yaml"
    file.write_text(
        "mode: permissive\n"
        "entity_types: [{name: Person}]\n"
        "predicates:\n"
        "  - {name: passport_deadline, value_type: date, description: when it expires}\n",
        encoding="utf-8",
    )
    put: Any = sgam(*memory.args("schema", "put", str(file), "--json")).json()
    assert (put["version"], put["predicates"][0]["name"]) == (1, "passport_deadline")
    got: Any = sgam(*memory.args("schema", "get", "--json")).json()
    assert got == put
    table = sgam(*memory.args("schema", "get"))
    assert "passport_deadline  date" in table.out
    assert "when it expires" in table.out

    bad = tmp_path / "bad.json"
    bad.write_text('{"predicates": [{"name": "Bad Name", "value_type": "string"}]}')
    refused = sgam(*memory.args("schema", "put", str(bad)))
    assert refused.code == 1
    assert refused.err.startswith("sgam: Invalid input: predicates.0.name: ")
    assert sgam(*memory.args("schema", "get", "--json")).json()["version"] == 1  # type: ignore[index]


def test_retract_ends_the_current_value(sgam: Sgam, memory: Memory) -> None:
    [current] = sgam(*memory.args("facts", *DEADLINE, "--json")).json()["facts"]  # type: ignore[index]
    ended: Any = sgam(
        *memory.args("retract", current["fact_id"], "--valid-to", "2026-07-01T00:00:00Z", "--json")
    ).json()
    assert (ended["fact_id"], ended["valid_to"]) == (current["fact_id"], "2026-07-01T00:00:00Z")
    after = sgam(*memory.args("facts", *DEADLINE, "--as-of", "2026-07-02T00:00:00Z", "--json"))
    assert after.json() == {"facts": [], "next_cursor": None}
    june: Any = sgam(*memory.args("facts", *DEADLINE, "--as-of", "2026-06-20T00:00:00Z", "--json"))
    assert _values(june.json()) == [("2026-06-30", "e2")]


def test_search_and_context(sgam: Sgam, memory: Memory) -> None:
    question = "When is Mira's passport deadline?"
    then: Any = sgam(
        *memory.args("context", question, "--as-of", "2026-06-02T00:00:00Z", "--json")
    ).json()
    deadlines = [f for f in then["facts"] if f["predicate"] == "passport_deadline"]
    assert [(f["value"], f["source_episode_id"]) for f in deadlines] == [("2026-07-15", "e1")]
    assert "2026-07-15" in then["text"]
    assert "2026-06-30" not in then["text"]
    text = sgam(*memory.args("context", question))
    assert text.out.startswith("Facts valid at ")
    assert "2026-06-30" in text.out
    found: Any = sgam(
        *memory.args("search", "Mira passport deadline", "--scopes", "facts", "--json")
    ).json()
    assert {h["kind"] for h in found["results"]} == {"fact"}
    top = found["results"][0]["item"]
    assert (top["predicate"], top["value"]) == ("passport_deadline", "2026-06-30")
    table = sgam(*memory.args("search", "passport deadline", "--limit", "2"))
    assert table.out.splitlines()[0].split() == ["#", "kind", "score", "id", "item", "sources"]
    assert len(table.out.splitlines()) == 3
