"""Errors end a command with one line on stderr, never a traceback, and a documented exit
status: 1 refused or not found by the service, 2 usage, unreadable input, unreachable."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.cli.conftest import Memory, Sgam


def _one_line(err: str) -> str:
    assert err.endswith("\n")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err.strip()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_refusals_exit_1_naming_the_problem(sgam: Sgam, memory: Memory) -> None:
    cases = [
        (("episodes", "get", "nope"), "sgam: Not found: episode 'nope' not found"),
        (("retract", "f_nope"), "sgam: Not found: fact 'f_nope' not found"),
        (("neighbors", "nobody"), "sgam: Not found: entity 'nobody' not found"),
        (
            (
                "episodes",
                "add",
                "--episode-id",
                "e1",
                "--content",
                "other words",
                "--occurred-at",
                "2026-06-01T09:00:00Z",
            ),
            "sgam: Conflict: ",
        ),
        (("facts", "--limit", "0"), "sgam: Invalid input: "),
        (("neighbors", "mira", "--depth", "9"), "sgam: Invalid input: "),
        (("search", ""), "sgam: Invalid input: "),
    ]
    for argv, message in cases:
        r = sgam(*memory.args(*argv))
        assert (r.code, r.out) == (1, ""), (argv, r)
        assert _one_line(r.err).startswith(message), (argv, r.err)


def test_a_tenant_the_key_cannot_see_is_not_found(sgam: Sgam, api_memory: Memory) -> None:
    r = sgam("facts", *api_memory.where, "--tenant", "someone-else")
    assert r.code == 1
    assert _one_line(r.err) == "sgam: Not found: tenant 'someone-else' not found"


def test_usage_errors_exit_2(sgam: Sgam, memory: Memory, tmp_path: Path) -> None:
    cases = [
        (
            memory.args("facts", "--as-of", "2026-06-02"),
            "sgam facts: Invalid value for '--as-of': timestamp 2026-06-02T00:00:00 has no UTC"
            " offset; add one such as 'Z' (see sgam facts --help)",
        ),
        (memory.args("facts", "--subjet", "mira"), "sgam facts: No such option: --subjet"),
        (memory.args("history", "--subject", "mira"), "sgam history: Missing option"),
        (memory.args("neighbors", "mira", "--direction", "up"), "sgam neighbors: Invalid value"),
        (["facts", *memory.where], "sgam: no tenant: pass --tenant T or set SGAM_TENANT"),
        (
            memory.args("schema", "put", str(tmp_path / "missing.yaml")),
            f"sgam: cannot read {tmp_path / 'missing.yaml'}: ",
        ),
        (
            memory.args(
                "episodes",
                "add",
                "--kind",
                "event",
                "--content",
                "not json",
                "--occurred-at",
                "2026-06-01T09:00:00Z",
            ),
            "sgam: --content of an event must be a JSON object",
        ),
    ]
    for argv, message in cases:
        r = sgam(*argv)
        assert (r.code, r.out) == (2, ""), (argv, r)
        assert _one_line(r.err).startswith(message), (argv, r.err)


def test_where_the_memory_is_must_be_one_place(sgam: Sgam, tmp_path: Path) -> None:
    both = sgam("facts", "--store", "sqlite:///x.db", "--api", "http://x", "--tenant", "acme")
    assert (both.code, _one_line(both.err)) == (
        2,
        "sgam: --store and --api exclude each other: choose one",
    )
    key = sgam("facts", "--store", f"sqlite:///{tmp_path}/x.db", "--key", "k", "--tenant", "a")
    assert (key.code, _one_line(key.err)) == (2, "sgam: --key goes with --api, not with --store")


def test_an_unreachable_store_or_api_exits_2(sgam: Sgam, tmp_path: Path) -> None:
    missing = f"sqlite:///{tmp_path}/none.db"
    r = sgam("facts", "--store", missing, "--tenant", "acme")
    assert r.code == 2
    assert _one_line(r.err) == (
        f"sgam: no store at {missing}: {tmp_path}/none.db does not exist (pass --store or --api)"
    )
    assert not (tmp_path / "none.db").exists()  # a read creates nothing

    url = f"http://127.0.0.1:{_closed_port()}"
    r = sgam("facts", "--api", url, "--tenant", "acme")
    assert r.code == 2
    assert _one_line(r.err).startswith(f"sgam: cannot reach the API at {url}: ")
    r = sgam("context", "anything?", "--api", "localhost:8080", "--tenant", "acme")
    assert r.code == 2
    assert "unsupported protocol" in _one_line(r.err)
    r = sgam("facts", "--store", "mysql://db/sgam", "--tenant", "acme")
    assert r.code == 2
    assert _one_line(r.err).startswith("sgam: cannot open the store mysql://db/sgam: ")


def test_an_unreachable_neo4j_exits_2(sgam: Sgam) -> None:
    url = f"bolt://127.0.0.1:{_closed_port()}"
    r = sgam("facts", "--store", url, "--tenant", "acme")
    assert r.code == 2
    assert _one_line(r.err).startswith(f"sgam: cannot open the store {url}: ")


def test_a_wrong_key_is_refused(sgam: Sgam, api_memory: Memory) -> None:
    where = [*api_memory.where[:-1], "wrong"]
    r = sgam("facts", *where, "--tenant", api_memory.tenant)
    assert r.code == 1
    assert _one_line(r.err) == "sgam: Unauthorized: unknown API key"
