"""The installed ``sgam`` command: environment variables, shell completion, ``python -m``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Memory, Sgam, scenario

SGAM = str(Path(sys.executable).with_name("sgam"))


def _run(*argv: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SGAM_", "_SGAM"))}
    return subprocess.run(
        argv,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def test_the_installed_command_reads_its_environment(tmp_path: Path, tenant: str) -> None:
    url = f"sqlite:///{tmp_path}/env.db"
    env = {"SGAM_STORE_URL": url, "SGAM_TENANT": tenant}
    replayed = _run(SGAM, "replay", str(scenario(tmp_path, tenant)), env=env)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    asked = _run(
        SGAM,
        "facts",
        "--subject",
        "mira",
        "--predicate",
        "passport_deadline",
        "--as-of",
        "2026-06-02T00:00:00Z",
        "--json",
        env=env,
    )
    assert (asked.returncode, asked.stderr) == (0, "")
    [fact] = json.loads(asked.stdout)["facts"]
    assert (fact["value"], fact["source_episode_id"]) == ("2026-07-15", "e1")
    # Piped: a plain table, no ANSI.
    table = _run(SGAM, "history", "--subject", "mira", "--predicate", "passport_deadline", env=env)
    assert table.returncode == 0, table.stderr
    assert "\x1b[" not in table.stdout
    assert len(table.stdout.splitlines()) == 4
    missing = _run(SGAM, "episodes", "get", "nope", env=env)
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr == "sgam: Not found: episode 'nope' not found\n"


def test_the_api_is_chosen_over_the_store_unless_a_flag_says_otherwise(
    sgam: Sgam, api_memory: Memory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    api, key = api_memory.where[1], api_memory.where[3]
    monkeypatch.setenv("SGAM_STORE_URL", f"sqlite:///{tmp_path}/elsewhere.db")
    monkeypatch.setenv("SGAM_API_URL", api)
    monkeypatch.setenv("SGAM_API_KEY", key)
    monkeypatch.setenv("SGAM_TENANT", api_memory.tenant)
    via_api = sgam("facts", "--subject", "mira", "--predicate", "passport_deadline", "--json")
    assert [f["value"] for f in via_api.json()["facts"]] == ["2026-06-30"]  # type: ignore[index]
    # An explicit --store wins over SGAM_API_URL (and that file does not exist).
    r = sgam("facts", "--store", f"sqlite:///{tmp_path}/elsewhere.db")
    assert r.code == 2
    assert "elsewhere.db does not exist" in r.err


def test_shell_completion(sgam: Sgam) -> None:
    shown = sgam("--show-completion", "bash")
    assert shown.code == 0
    assert "_SGAM_COMPLETE=complete_bash" in shown.out
    done = _run(
        SGAM, env={"_SGAM_COMPLETE": "complete_bash", "COMP_WORDS": "sgam epi", "COMP_CWORD": "1"}
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["episodes"]
    sub = _run(
        SGAM,
        env={"_SGAM_COMPLETE": "complete_bash", "COMP_WORDS": "sgam facts --as", "COMP_CWORD": "2"},
    )
    assert sub.stdout.split() == ["--as-of"]


def test_python_dash_m_is_the_same_command() -> None:
    done = _run(sys.executable, "-m", "api.cli", "--help", env={})
    assert done.returncode == 0, done.stderr
    assert "Usage: sgam" in done.stdout
    assert "facts" in done.stdout
