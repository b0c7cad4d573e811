"""``sgam import``/``export`` at their edges, on a real SQLite store: lines no parser can
hold are refused alone, extraction is queued without a model, out-of-range instants and
an unwritable reject file are clear errors, and the summary counts only what was written."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from api.cli import main
from api.transfer.commands import REJECT_FILE_FAILED, run_export, run_import
from api.transfer.exporter import ExportKind
from api.transfer.importer import ServiceSink, import_lines
from graph.model import ConflictPolicy, EpisodeStatus, FactQuery
from graph.schema import MemorySchema
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore
from graph.timeutil import utcnow

DEEP = 5000  # far past Python's recursion limit
T = "2026-01-01T00:00:00Z"


def _line(body: object) -> str:
    return json.dumps(body) + "\n"


def _episode(eid: str, **kw: object) -> str:
    return _line({"episode_id": eid, "content": f"{eid} said", "occurred_at": T, **kw})


def _facts(subject: str, value: object = "Oslo", **kw: object) -> str:
    fact = {"subject": subject, "predicate": "city", "value": value, "valid_from": T, **kw}
    return _line({"facts": [{"source_episode_id": "e1", **fact}]})


def _import(src: Path, db: Path, rejects: Path | None = None, *, restore: bool = False) -> int:
    return run_import(
        str(src),
        store_url=f"sqlite:///{db}",
        api_url=None,
        key=None,
        tenant="t",
        reject_file=None if rejects is None else str(rejects),
        restore_ledger=restore,
    )


def _subjects(db: Path) -> set[str]:
    s = SqliteStore(db)
    try:
        q = FactQuery(as_of=None, known_at=utcnow(), limit=1000)
        return {f.subject for f in s.facts(tenant_id="t", query=q)}
    finally:
        s.close()


def _refused(rejects: Path) -> dict[int, dict[str, object]]:
    return {r["line"]: r for r in map(json.loads, rejects.read_text().splitlines())}


# -- 1. lines the parser cannot hold ---------------------------------------------------
def test_lines_too_deep_or_too_long_a_number_are_refused_alone(tmp_path: Path) -> None:
    """Each was a RecursionError or a ValueError that stopped the whole import."""
    src, db, rejects = tmp_path / "in.jsonl", tmp_path / "s.db", tmp_path / "r.jsonl"
    lines = [
        _episode("e1"),
        _facts("ann"),
        '{"facts":' + "[" * DEEP + "]" * DEEP + "}\n",  # 3: balanced, the API's 422
        '{"facts":' + "[" * DEEP + "\n",  # 4: unbalanced, opened as deep: the same 422
        _facts("big", 0).replace(": 0,", ": 1" + "0" * 5000 + ","),  # 5: over 4,300 digits
        _facts("wide", 0).replace(": 0,", f": {2**70},"),  # 6: 22 digits, over 64 bits
        _facts("nan", 0).replace(": 0,", ": NaN,"),  # 7-9: what JSON does not carry
        _facts("inf", 0).replace(": 0,", ": -Infinity,"),
        _facts("huge", 0).replace(": 0,", ": 1e999,"),
        '{"facts": [[[\n',  # 10: unbalanced and shallow: malformed
        _facts("bob"),
    ]
    src.write_text("".join(lines))
    assert _import(src, db, rejects) == 1
    refused = _refused(rejects)
    assert sorted(refused) == [3, 4, 5, 6, 7, 8, 9, 10]
    assert [refused[n]["status"] for n in sorted(refused)] == [
        422,
        422,
        400,
        400,
        400,
        400,
        400,
        400,
    ]
    too_deep = "facts: nests deeper than 32 levels of objects and arrays (the limit is 32)"
    assert refused[3]["detail"] == refused[4]["detail"] == too_deep
    assert "5001 characters) does not fit in a 64-bit integer" in str(refused[5]["detail"])
    assert "not portable JSON" in str(refused[5]["detail"])
    assert f"{2**70} does not fit in a 64-bit integer" in str(refused[6]["detail"])
    # The API's own words for such bodies (api.limits.load_portable).
    assert str(refused[7]["detail"]).endswith("not portable JSON: NaN is not a JSON number")
    assert str(refused[8]["detail"]).endswith("not portable JSON: -Infinity is not a JSON number")
    assert str(refused[9]["detail"]).endswith("1e999 is out of the range of a double")
    assert "not valid JSON" in str(refused[10]["detail"])
    assert _subjects(db) == {"ann", "bob"}


def _ledger(tmp_path: Path) -> list[str]:
    """A small tenant's ledger export, as lines."""
    src, db = tmp_path / "seed.jsonl", tmp_path / "seed.db"
    src.write_text(_episode("e1") + _facts("ann") + _facts("bob"))
    assert _import(src, db) == 0
    out = io.StringIO()
    code = run_export(
        store_url=f"sqlite:///{db}",
        api_url=None,
        key=None,
        tenant="t",
        kind=ExportKind.LEDGER,
        as_of=None,
        known_at=None,
        out=out,
    )
    assert code == 0
    return out.getvalue().splitlines(keepends=True)


def _huge_seq(lines: list[str]) -> list[str]:
    out = []
    for x in lines:
        r = json.loads(x)
        if r["type"] == "assertion":
            r["seq"] = 2**70
        out.append(_line(r))
    return out


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda ls: [*ls, "[" * DEEP + "]" * DEEP + "\n"], "nests deeper than"),
        (lambda ls: [*ls, "[" * DEEP + "\n"], "nests deeper than"),  # opened as deep
        (lambda ls: [*ls, "[[[\n"], "not valid JSON"),
        (lambda ls: [*ls, '{"type":"assertion","seq":1' + "0" * 5000 + "}\n"], "64-bit"),
        (_huge_seq, "64-bit"),
    ],
    ids=["deep", "unbalanced-deep", "unbalanced", "digits", "seq-2**70"],
)
def test_restore_stops_with_a_clear_error_on_what_no_export_writes(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit: Callable[[list[str]], list[str]],
    says: str,
) -> None:
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text("".join(edit(_ledger(tmp_path))))
    capsys.readouterr()
    assert _import(ledger, tmp_path / "target.db", restore=True) == 2
    err = capsys.readouterr().err
    assert err.startswith("restore stopped:")
    assert says in err
    assert "Traceback" not in err


# -- 2. extraction is queued, never run ------------------------------------------------
MAPPED = MemorySchema.model_validate(
    {
        "mode": "strict",
        "entity_types": [{"name": "Customer"}],
        "predicates": [{"name": "tier", "value_type": "string"}],
        "event_mappings": [
            {
                "event_type": "customer.tier_changed",
                "subject": {"field": "customer_id", "type": "Customer"},
                "facts": [{"predicate": "tier", "value_field": "tier"}],
            }
        ],
    }
)


def test_episodes_asking_for_extraction_are_stored_pending_for_the_worker(
    tmp_path: Path,
) -> None:
    """They were refused with 422 "needs an extractor": the import passed no model."""
    db, src = tmp_path / "s.db", tmp_path / "in.jsonl"
    store = SqliteStore(db)
    store.init()
    MemoryService(store).put_schema(tenant_id="t", schema=MAPPED)
    store.close()
    event = {"type": "customer.tier_changed", "customer_id": "c1", "tier": "gold"}
    src.write_text(
        _episode("bg", extract="background")
        + _episode("sy", extract="sync")
        + _episode("no", extract="none")
        + _episode("plain")
        + _line({"episode_id": "ev", "kind": "event", "content": event, "occurred_at": T})
    )
    assert _import(src, db) == 0
    store = SqliteStore(db)
    try:
        got = {
            eid: (e.status, e.needs_model)
            for eid in ("bg", "sy", "no", "plain", "ev")
            if (e := store.get_episode(tenant_id="t", episode_id=eid)) is not None
        }
        now = FactQuery(as_of=None, known_at=utcnow(), limit=10)
        assert store.facts(tenant_id="t", query=now) == []  # nothing extracted yet
    finally:
        store.close()
    assert got == {
        "bg": (EpisodeStatus.PENDING, True),  # no mapping matches: a model's work
        "sy": (EpisodeStatus.PENDING, True),  # sync cannot wait in an import: queued
        "no": (EpisodeStatus.STORED, None),
        "plain": (EpisodeStatus.STORED, None),
        "ev": (EpisodeStatus.PENDING, False),  # the mapping does it: any worker may
    }


# -- 3. instants with no UTC form ------------------------------------------------------
@pytest.mark.parametrize("flag", ["--as-of", "--known-at"])
@pytest.mark.parametrize("when", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_an_instant_outside_the_utc_years_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, when: str
) -> None:
    """It was an OverflowError out of astimezone."""
    capsys.readouterr()
    code = main(["export", "--store", f"sqlite:///{tmp_path}/s.db", flag, when])
    err = capsys.readouterr().err
    assert code == 2
    assert f"timestamp {when} is out of range" in err
    assert "Traceback" not in err


# -- 4. the reject file ----------------------------------------------------------------
def test_a_reject_file_that_cannot_be_written_is_named_before_any_line_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, db = tmp_path / "in.jsonl", tmp_path / "s.db"
    src.write_text(_episode("e1") + _facts("ann"))
    rejects = tmp_path / "no-such-dir" / "r.jsonl"
    capsys.readouterr()
    assert _import(src, db, rejects) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cannot write the reject file {rejects}:")
    assert "cannot read" not in err
    assert not db.exists()  # nothing was imported, not even the store opened


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_a_reject_file_that_fails_mid_import_is_named_and_stops_the_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """/dev/full opens, and every write to it fails with ENOSPC, as a full disk does. It
    was reported as "cannot read in.jsonl", exit 2: an input error."""
    src, db = tmp_path / "in.jsonl", tmp_path / "s.db"
    src.write_text(_episode("e1") + _facts("ann") + "not json\n" + _facts("bob"))
    capsys.readouterr()
    assert _import(src, db, Path("/dev/full")) == REJECT_FILE_FAILED == 3
    err = capsys.readouterr().err
    assert err.startswith("cannot write the reject file /dev/full: [Errno 28] No space left")
    assert "the import stopped at line 3, the record of refused line 3 is lost" in err
    assert "cannot read" not in err
    # Stopped at the line it could not record: the facts gathered before it and the line
    # after it were not written (a re-run with room for the reject file writes them).
    assert _subjects(db) == set()
    assert _import(src, db, tmp_path / "r.jsonl") == 1
    assert _subjects(db) == {"ann", "bob"}
    assert sorted(_refused(tmp_path / "r.jsonl")) == [3]


# -- 5. the summary's counts -----------------------------------------------------------
def _report_of(store: SqliteStore, text: str, policy: ConflictPolicy | None = None) -> str:
    sink = ServiceSink(MemoryService(store), tenant_id="t")
    report = import_lines(io.BytesIO(text.encode()), sink, rejects=None, policy=policy)
    assert report.refused == 0
    return report.summary()


def test_facts_the_policy_kept_out_are_not_counted_as_written(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    store.init()
    try:
        first = _episode("e1") + _episode("e2") + _facts("ann", "Rome", confidence=0.9)
        assert "2 episodes and 1 facts written, 0 facts already there" in _report_of(store, first)
        weaker = _facts("ann", "Oslo", confidence=0.5).replace('"e1"', '"e2"')
        summary = _report_of(store, weaker, ConflictPolicy.HIGHEST_CONFIDENCE_WINS)
        assert "0 episodes and 0 facts written, 1 facts already there" in summary
    finally:
        store.close()


def test_a_redelivered_episode_counts_its_facts_as_already_there(tmp_path: Path) -> None:
    fact = {"subject": "ann", "predicate": "city", "value": "Oslo", "valid_from": T}
    text = _episode("e1", facts=[fact, {**fact, "subject": "bob"}])
    store = SqliteStore(tmp_path / "s.db")
    store.init()
    try:
        assert "1 episodes and 2 facts written, 0 facts already there" in _report_of(store, text)
        assert "0 episodes and 0 facts written, 2 facts already there" in _report_of(store, text)
    finally:
        store.close()
