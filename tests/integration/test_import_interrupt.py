"""Ctrl-C during `sgam import` (a real process, a real SQLite file): a summary of what was
written and how to resume, exit status 130, and nothing half-written; and a Ctrl-C that
lands inside one of the store's SQL functions stays a Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graph.model import EpisodeCreate, MemoryDelta
from graph.service import MemoryService
from graph.stores.sqlite import terms
from graph.stores.sqlite.store import SqliteStore
from tests.conftest import ROOT, wait_until

_AS_IN_A_TERMINAL = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler);"
    " from api.cli import main; sys.exit(main(sys.argv[1:]))"
)


def _rows(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as c:
            return int(c.execute("SELECT count(*) FROM facts").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def test_an_interrupted_import_says_where_it_stopped_and_resumes(tmp_path: Path) -> None:
    src, db = tmp_path / "in.jsonl", tmp_path / "s.db"
    with src.open("w") as f:
        for i in range(2000):  # 200,000 facts: far from done when interrupted
            f.write(
                json.dumps(
                    {"episode_id": f"e{i}", "content": "x", "occurred_at": "2026-01-01T00:00:00Z"}
                )
                + "\n"
            )
            facts = [
                {
                    "subject": f"p{i}-{j}",
                    "predicate": "city",
                    "value": "Oslo",
                    "source_episode_id": f"e{i}",
                }
                for j in range(100)
            ]
            f.write(json.dumps({"facts": facts}) + "\n")
    args = ["import", str(src), "--store", f"sqlite:///{db}", "--tenant", "t"]
    # Ctrl-C as in a terminal: a process inherits an ignored SIGINT (a background job, or
    # a parent that ignores it), and Python then installs no KeyboardInterrupt handler.
    cmd = [sys.executable, "-c", _AS_IN_A_TERMINAL, *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_until(lambda: _rows(db) > 0, seconds=60)  # it is writing
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted at line " in err
    assert "run the same command again to resume" in err
    assert "Traceback" not in err
    written = _rows(db)
    assert 0 < written < 200_000
    assert written % 1000 == 0  # whole batches only: each write is one transaction


class Interrupted(Exception):
    """Raised by the test's SIGINT handler: a KeyboardInterrupt escaping would stop the
    whole test session instead of failing this test."""


def test_a_ctrl_c_while_sqlite_runs_a_sql_function_stays_a_ctrl_c(
    sqlite_store: SqliteStore, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's fulltext triggers run Python SQL functions on every indexed insert, and
    sqlite3 reports whatever they raise as "user-defined function raised exception". A
    Ctrl-C landing there was a StoreFailedError: `sgam import` refused the line (or wrote
    its batch again line by line) and ran to the end (the test above, twice in the full
    suite, 4 Dec). SIGINT is now held off while SQLite works: the write commits whole and
    the interrupt is raised right after it."""
    svc = MemoryService(sqlite_store)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    svc.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id="e1", content="x", occurred_at=at)
    )
    index_terms = terms.index_terms

    def ctrl_c_now(prefix: str, text: str) -> str:
        os.kill(os.getpid(), signal.SIGINT)  # as a terminal sends it, to this process
        return index_terms(prefix, text)

    def handler(signum: int, frame: object) -> None:
        raise Interrupted

    monkeypatch.setattr(terms, "index_terms", ctrl_c_now)
    previous = signal.signal(signal.SIGINT, handler)
    delta = MemoryDelta(subject="mira", predicate="city", value="Oslo", source_episode_id="e1")
    try:
        with pytest.raises(Interrupted):
            svc.write_facts(tenant_id=tenant, deltas=[delta])
    finally:
        signal.signal(signal.SIGINT, previous)
    monkeypatch.undo()
    [written] = svc.facts(tenant_id=tenant)  # committed whole before the interrupt
    assert (written.subject, written.value) == ("mira", "Oslo")
    later = MemoryDelta(subject="ada", predicate="city", value="Rome", source_episode_id="e1")
    assert svc.write_facts(tenant_id=tenant, deltas=[later]).facts[0].value == "Rome"
