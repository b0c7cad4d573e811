"""The closing "current state" of ``sgam replay`` (examples/scenarios/README.md): what
the memory holds now for every subject and predicate the scenario wrote, one line each;
a write the service refused wrote nothing and adds no line."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import Sgam
from tests.conftest import ROOT

ACCOUNTS = ROOT / "examples" / "scenarios" / "accounts.json"


def test_accounts_summary_lists_the_written_timelines(sgam: Sgam, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'accounts.db'}"
    r = sgam("replay", str(ACCOUNTS), "--store", store)
    assert r.code == 0, r.out + r.err
    summary = r.out.split("current state:\n", 1)[1].splitlines()[:-1]
    assert summary == [
        "  current cust-7.owns = acct-1 (ep-1)",
        "  current acct-1.covered_by = pol-basic (ep-1)",
        "  current cust-7.status = gold (ep-1)",
    ]
