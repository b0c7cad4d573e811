"""``sgam replay FILE --api URL --key KEY`` against a real server on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from api.cli import main
from api.server import running
from api.settings import Settings
from graph.port import Store
from tests.conftest import SCENARIOS

MIRA = SCENARIOS / "mira.json"


def _scenario(tmp_path: Path, tenant: str, *, wrong: bool = False) -> str:
    scenario = json.loads(MIRA.read_text(encoding="utf-8"))
    scenario["tenant"] = tenant
    if wrong:
        scenario["steps"][5]["expect"]["value"] = "2026-06-30"  # on 2 June it was 2026-07-15
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario))
    return str(path)


def test_replay_over_http_passes_and_fails_as_in_process(
    store: Store, tenant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings(host="127.0.0.1", port=0, api_keys=f"{tenant}:k1", log_level="warning")
    with running(settings, store=store) as url:
        assert main(["replay", _scenario(tmp_path, tenant), "--api", url, "--key", "k1"]) == 0
        out = capsys.readouterr().out
        assert "current mira.passport_deadline = 2026-06-30 (e2)" in out
        wrong = _scenario(tmp_path, tenant, wrong=True)
        # Same episodes again: 200 (idempotent); the wrong expectation fails the run.
        assert main(["replay", wrong, "--api", url, "--key", "k1"]) == 1
        assert "[5] FAIL" in capsys.readouterr().out
        # A key for another tenant cannot even see the episodes: every step fails.
        assert main(["replay", _scenario(tmp_path, tenant), "--api", url, "--key", "nope"]) == 1
