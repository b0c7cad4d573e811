"""``sgam replay``: output, and exit codes 0 (held), 1 (an expectation failed), 2 (malformed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from api.cli import main

MIRA = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "mira.json"


def test_mira_passes_and_prints_the_three_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["replay", str(MIRA), "--store", f"sqlite:///{tmp_path}/m.db"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "current mira.passport_deadline = 2026-06-30 (e2)" in out
    assert "as of 2026-06-02T00:00:00Z = 2026-07-15 (e1) ok" in out
    assert "as of 2026-05-31T00:00:00Z = 2026-08-01 (e0) ok" in out
    assert out.strip().endswith("PASS: 0 failed expectation(s)")


def test_a_wrong_expectation_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = json.loads(MIRA.read_text())
    scenario["steps"][4]["expect"]["value"] = "2026-07-15"  # wrong: e2 corrected it
    bad = tmp_path / "wrong.json"
    bad.write_text(json.dumps(scenario))
    assert main(["replay", str(bad), "--store", f"sqlite:///{tmp_path}/w.db"]) == 1
    assert "[4] FAIL expect mira.passport_deadline" in capsys.readouterr().out


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        '{"tenant": "acme"}',
        '{"tenant": "Bad Tenant", "steps": []}',
        '{"tenant": "acme", "steps": [{"bogus": 1}]}',
    ],
)
def test_malformed_files_exit_2(tmp_path: Path, content: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(content)
    assert main(["replay", str(f), "--store", f"sqlite:///{tmp_path}/b.db"]) == 2


def test_conflict_steps_must_leave_the_ledger_unchanged(tmp_path: Path) -> None:
    episode = {
        "episode": {"episode_id": "e1", "content": "x", "occurred_at": "2026-01-01T00:00:00Z"}
    }
    fact = {
        "subject": "a",
        "predicate": "p",
        "value": "1",
        "valid_from": "2026-01-01T00:00:00Z",
        "source_episode_id": "e1",
    }
    clash = {**fact, "value": "2"}
    steps = [
        episode,
        {"facts": [fact]},
        {"facts": [clash], "expect_status": 409},
        {"facts": [{**fact, "valid_from": "2026-01-01T00:00:00"}], "expect_status": 422},
        {"expect": {"subject": "a", "predicate": "p", "value": "1", "source_episode_id": "e1"}},
        {
            "expect": {
                "subject": "a",
                "predicate": "p",
                "known_at": {"after_step": 0},
                "empty": True,
            }
        },
    ]
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"name": "c", "tenant": "acme", "steps": steps}))
    assert main(["replay", str(f), "--store", f"sqlite:///{tmp_path}/c.db"]) == 0


def test_the_installed_command_runs(tmp_path: Path) -> None:
    sgam = Path(sys.executable).with_name("sgam")
    done = subprocess.run(
        [str(sgam), "replay", str(MIRA), "--store", f"sqlite:///{tmp_path}/s.db"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout
