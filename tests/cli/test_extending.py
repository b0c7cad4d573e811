"""A new command is one function registered with ``memory_command``. This one prints its
own output and returns its own exit status, the shape of a command that streams (an
import with a progress bar, an export of JSON Lines)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from api.cli import main
from api.cli.core import Subject, Target, memory_command
from tests.cli.conftest import scenario


def count(t: Target, subject: Subject = None) -> int:
    """Count the current facts of a subject, page by page."""
    n = sum(1 for _ in t.client.iter_facts(t.tenant, subject=subject, page_size=1))
    print(f"{n} fact(s)")
    return 0 if n else 1


def test_a_command_with_its_own_output_and_exit_status(
    tmp_path: Path, tenant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    app = typer.Typer()
    memory_command(app, "count")(count)
    command = typer.main.get_command(app)
    url = f"sqlite:///{tmp_path}/x.db"
    assert main(["replay", str(scenario(tmp_path, tenant)), "--store", url]) == 0
    capsys.readouterr()

    def run(*argv: str) -> tuple[int, str]:
        code: int = command.main([*argv, "--store", url], prog_name="count", standalone_mode=False)
        return code, capsys.readouterr().out

    assert run("--subject", "mira", "--tenant", tenant) == (0, "1 fact(s)\n")
    assert run("--subject", "nobody", "--tenant", tenant) == (1, "0 fact(s)\n")
    code, usage = run("--help")
    assert code == 0
    assert "--tenant" in usage
    assert "--json" not in usage  # it answers with its own output
