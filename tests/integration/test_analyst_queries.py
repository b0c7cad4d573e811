"""The analyst queries of docs/graph-model.md, run as written against a real Neo4j.

The queries are read from the document itself, so the documentation cannot drift from
what the store writes; every query the document holds must be run here (the first test
fails on one that is not). Time parameters are passed as driver datetimes and, where the
document promises it, as RFC 3339 strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from neo4j import Driver

from graph.model import EpisodeCreate, EpisodeKind, MemoryDelta
from graph.service import MemoryService
from tests.conftest import ROOT

pytestmark = pytest.mark.neo4j

DOC = ROOT / "docs" / "graph-model.md"
QUERY_RE = re.compile(r"<!-- query: (\w+) -->\s*```cypher\n(.*?)```", re.DOTALL)


def d(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def doc_queries() -> dict[str, str]:
    return dict(QUERY_RE.findall(DOC.read_text(encoding="utf-8")))


def test_the_document_holds_every_analyst_query() -> None:
    assert set(doc_queries()) == {
        "current_accounts",
        "policies_on_date",
        "customer_policies_on_date",
        "changes_between",
        "believed_at",
        "fact_provenance",
        "timeline_history",
    }


def rel(
    s: str, st: str, p: str, o: str, ot: str, start: datetime, ep: str, end: datetime | None = None
) -> MemoryDelta:
    return MemoryDelta(
        subject=s,
        subject_type=st,
        predicate=p,
        object=o,
        object_type=ot,
        valid_from=start,
        valid_to=end,
        source_episode_id=ep,
    )


@dataclass(frozen=True)
class Bank:
    silver: str  # fact ids
    gold: str
    gold_recorded_at: datetime  # system time of the first write (gold)
    silver_recorded_at: datetime  # system time of the correction (silver)


@pytest.fixture
def bank(nsvc: MemoryService, ntenant: str) -> Bank:
    """cust-7 owns acct-1 (open), owned acct-2 until 2024-09-01 and will own acct-3 from
    2030; acct-1 was covered by pol-basic until 2024-06-01, then by pol-premium; the
    status went gold → silver on 2024-06-01 (said by ep-2, corroborated by ep-3)."""
    for ep, when, text in (
        ("ep-1", d(2024, 1, 1), "Onboarding: cust-7 opened acct-1, gold status"),
        ("ep-2", d(2024, 6, 1), "Review: cust-7 downgraded to silver"),
        ("ep-3", d(2024, 6, 2), "CRM sync: cust-7 status silver"),
    ):
        nsvc.add_episode(
            tenant_id=ntenant,
            body=EpisodeCreate(
                episode_id=ep, kind=EpisodeKind.MESSAGE, content=text, occurred_at=when
            ),
        )
    first = nsvc.write_facts(
        tenant_id=ntenant,
        deltas=[
            rel("cust-7", "Customer", "owns", "acct-1", "Account", d(2024, 1, 1), "ep-1"),
            rel(
                "cust-7",
                "Customer",
                "owns",
                "acct-2",
                "Account",
                d(2024, 3, 1),
                "ep-1",
                d(2024, 9, 1),
            ),
            rel("cust-7", "Customer", "owns", "acct-3", "Account", d(2030, 1, 1), "ep-1"),
            rel(
                "acct-1",
                "Account",
                "covered_by",
                "pol-basic",
                "Policy",
                d(2024, 1, 1),
                "ep-1",
                d(2024, 6, 1),
            ),
            rel("acct-1", "Account", "covered_by", "pol-premium", "Policy", d(2024, 6, 1), "ep-1"),
            rel("acct-2", "Account", "covered_by", "pol-legacy", "Policy", d(2024, 3, 1), "ep-1"),
            MemoryDelta(
                subject="cust-7",
                predicate="status",
                value="gold",
                valid_from=d(2024, 1, 1),
                source_episode_id="ep-1",
            ),
        ],
    )
    silver = nsvc.write_facts(
        tenant_id=ntenant,
        deltas=[
            MemoryDelta(
                subject="cust-7",
                predicate="status",
                value="silver",
                valid_from=d(2024, 6, 1),
                source_episode_id="ep-2",
            )
        ],
    ).facts[0]
    nsvc.write_facts(
        tenant_id=ntenant,
        deltas=[
            MemoryDelta(
                subject="cust-7",
                predicate="status",
                value="silver",
                valid_from=d(2024, 6, 1),
                source_episode_id="ep-3",
            )
        ],
    )
    gold = nsvc.facts(tenant_id=ntenant, subject="cust-7", predicate="status", as_of=d(2024, 2, 1))[
        0
    ]
    return Bank(
        silver=silver.fact_id,
        gold=gold.fact_id,
        gold_recorded_at=first.facts[-1].recorded_at,
        silver_recorded_at=silver.recorded_at,
    )


def run(driver: Driver, database: str, name: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(doc_queries()[name], params, database_=database)
    return [
        {k: (v.to_native() if hasattr(v, "to_native") else v) for k, v in r.data().items()}
        for r in records
    ]


def test_current_accounts_of_a_customer(
    bank: Bank, driver: Driver, database: str, ntenant: str
) -> None:
    rows = run(driver, database, "current_accounts", tenant_id=ntenant, customer="cust-7")
    # acct-2 was closed in 2024; acct-3 only starts in 2030.
    assert rows == [{"account": "acct-1", "since": d(2024, 1, 1)}]


def test_policies_covering_an_account_on_a_date(
    bank: Bank, driver: Driver, database: str, ntenant: str
) -> None:
    march = run(
        driver,
        database,
        "policies_on_date",
        tenant_id=ntenant,
        account="acct-1",
        date=d(2024, 3, 15),
    )
    assert march == [
        {"policy": "pol-basic", "valid_from": d(2024, 1, 1), "valid_to": d(2024, 6, 1)}
    ]
    at_switch = run(
        driver,
        database,
        "policies_on_date",
        tenant_id=ntenant,
        account="acct-1",
        date=d(2024, 6, 1),
    )
    assert at_switch == [{"policy": "pol-premium", "valid_from": d(2024, 6, 1), "valid_to": None}]
    before = run(
        driver,
        database,
        "policies_on_date",
        tenant_id=ntenant,
        account="acct-1",
        date=d(2023, 12, 31),
    )
    assert before == []


def test_time_parameters_may_be_rfc3339_strings(
    bank: Bank, driver: Driver, database: str, ntenant: str
) -> None:
    """The document promises strings work as well as datetimes (a bare date: midnight UTC)."""
    expected = [{"policy": "pol-basic", "valid_from": d(2024, 1, 1), "valid_to": d(2024, 6, 1)}]
    for date in ("2024-03-15T00:00:00Z", "2024-03-15T02:00:00+02:00", "2024-03-15"):
        rows = run(
            driver, database, "policies_on_date", tenant_id=ntenant, account="acct-1", date=date
        )
        assert rows == expected, date
    hops = run(
        driver,
        database,
        "customer_policies_on_date",
        tenant_id=ntenant,
        customer="cust-7",
        date="2024-10-01T00:00:00Z",
    )
    assert hops == [{"account": "acct-1", "policy": "pol-premium"}]
    changes = run(
        driver,
        database,
        "changes_between",
        tenant_id=ntenant,
        **{"from": "2024-08-01", "to": "2024-10-01T00:00:00Z"},
    )
    assert [(r["subject"], r["value"], r["change"], r["at"]) for r in changes] == [
        ("cust-7", "acct-2", "ended", d(2024, 9, 1))
    ]


def test_what_was_believed_at_a_time(
    bank: Bank, driver: Driver, database: str, ntenant: str
) -> None:
    def believed(as_of: datetime | str, known_at: datetime | str) -> list[dict[str, Any]]:
        rows = run(
            driver,
            database,
            "believed_at",
            tenant_id=ntenant,
            subject="cust-7",
            predicate="status",
            as_of=as_of,
            known_at=known_at,
        )
        for r in rows:
            recorded = r.pop("recorded_at")
            assert isinstance(recorded, datetime)
            assert parse_known(known_at) >= recorded
        return rows

    now = datetime.now(UTC)
    silver_now = [
        {"value": "silver", "valid_from": d(2024, 6, 1), "valid_to": None, "source": "ep-2"}
    ]
    # Believed now: the versions still believed have no retired_at at all (the recipe
    # `recorded_at <= known_at < retired_at` returned nothing here).
    assert believed(d(2024, 7, 1), now) == silver_now
    assert believed("2024-07-01T00:00:00Z", now.isoformat()) == silver_now
    assert believed(d(2024, 3, 1), now) == [
        {"value": "gold", "valid_from": d(2024, 1, 1), "valid_to": d(2024, 6, 1), "source": "ep-1"}
    ]
    # Just before the correction was recorded: gold, open-ended, even for July.
    before = bank.silver_recorded_at - timedelta(microseconds=1)
    assert before >= bank.gold_recorded_at
    assert believed(d(2024, 7, 1), before) == [
        {"value": "gold", "valid_from": d(2024, 1, 1), "valid_to": None, "source": "ep-1"}
    ]
    # Before anything was recorded: nothing.
    assert believed(d(2024, 7, 1), bank.gold_recorded_at - timedelta(microseconds=1)) == []


def parse_known(known_at: datetime | str) -> datetime:
    return known_at if isinstance(known_at, datetime) else datetime.fromisoformat(known_at)


def test_customer_policies_check_validity_on_every_hop(
    bank: Bank, driver: Driver, database: str, ntenant: str
) -> None:
    july = run(
        driver,
        database,
        "customer_policies_on_date",
        tenant_id=ntenant,
        customer="cust-7",
        date=d(2024, 7, 1),
    )
    assert july == [
        {"account": "acct-1", "policy": "pol-premium"},
        {"account": "acct-2", "policy": "pol-legacy"},
    ]
    # pol-legacy still covers acct-2 in October, but cust-7 no longer owns acct-2.
    october = run(
        driver,
        database,
        "customer_policies_on_date",
        tenant_id=ntenant,
        customer="cust-7",
        date=d(2024, 10, 1),
    )
    assert october == [{"account": "acct-1", "policy": "pol-premium"}]


def test_what_changed_between_two_dates(
    bank: Bank, driver: Driver, database: str, ntenant: str
) -> None:
    rows = run(
        driver,
        database,
        "changes_between",
        tenant_id=ntenant,
        **{"from": d(2024, 5, 1), "to": d(2024, 10, 1)},
    )
    assert [(r["subject"], r["predicate"], r["value"], r["change"], r["at"]) for r in rows] == [
        ("acct-1", "covered_by", "pol-premium", "started", d(2024, 6, 1)),
        ("acct-1", "covered_by", "pol-basic", "ended", d(2024, 6, 1)),
        ("cust-7", "status", "silver", "started", d(2024, 6, 1)),
        ("cust-7", "status", "gold", "ended", d(2024, 6, 1)),
        ("cust-7", "owns", "acct-2", "ended", d(2024, 9, 1)),
    ]


def test_where_a_fact_came_from(bank: Bank, driver: Driver, database: str, ntenant: str) -> None:
    rows = run(driver, database, "fact_provenance", tenant_id=ntenant, fact_id=bank.silver)
    assert rows == [
        {
            "fact": "cust-7 status silver",
            "episode": "ep-2",
            "kind": "message",
            "occurred_at": d(2024, 6, 1),
            "content": "Review: cust-7 downgraded to silver",
        },
        {
            "fact": "cust-7 status silver",
            "episode": "ep-3",
            "kind": "message",
            "occurred_at": d(2024, 6, 2),
            "content": "CRM sync: cust-7 status silver",
        },
    ]


def test_timeline_history(bank: Bank, driver: Driver, database: str, ntenant: str) -> None:
    rows = run(
        driver,
        database,
        "timeline_history",
        tenant_id=ntenant,
        subject="cust-7",
        predicate="status",
    )
    assert rows == [
        {
            "value": "gold",
            "valid_from": d(2024, 1, 1),
            "valid_to": d(2024, 6, 1),
            "source": "ep-1",
            "supersedes": [],
        },
        {
            "value": "silver",
            "valid_from": d(2024, 6, 1),
            "valid_to": None,
            "source": "ep-2",
            "supersedes": [bank.gold],
        },
    ]
