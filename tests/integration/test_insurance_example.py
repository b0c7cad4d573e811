"""The insurance example (examples/insurance/): every answer its README promises.

The tour's lines (the named episodes and the POST /facts lines citing them) load on both
stores; the whole file (~2,500 lines) loads on SQLite, where it must be accepted line by
line and give the same answers. On Neo4j the example's line-by-line loader takes minutes
for the whole file, so only the tour is loaded there (README.md says so). The README's
Cypher queries are read from the README itself and run on Neo4j.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from neo4j import Driver

from api.client import SgamBadRequest, SgamClient
from api.server import running
from api.settings import Settings
from graph import Direction, MemoryService, load_schema
from graph.port import Store
from graph.timeutil import utcnow
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "insurance"
README = EXAMPLE / "README.md"
GRAPH_MODEL = ROOT / "docs" / "graph-model.md"
QUERY_RE = re.compile(r"<!-- query: (\w+) -->\s*```cypher\n(.*?)```", re.DOTALL)
# known_at marks: the instant before these lines were loaded.
MARKS = ("ep-ada-address-form", "ep-ben-premium-correction")


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"insurance_{name}", EXAMPLE / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses resolve their module by name
    spec.loader.exec_module(mod)
    return mod


loader = _module("load")


def d(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def load(
    service: MemoryService, tenant: str, bodies: Iterable[dict[str, Any]]
) -> dict[str, datetime]:
    """Put the schema, post every line in order; return the known_at marks."""
    service.put_schema(tenant_id=tenant, schema=load_schema(EXAMPLE / "schema.json"))
    marks: dict[str, datetime] = {}
    for body in bodies:
        if body.get("episode_id") in MARKS:
            marks[body["episode_id"]] = utcnow()
            time.sleep(0.001)
        loader.post_in_process(service, tenant, body)
    assert set(marks) == set(MARKS)
    return marks


def tour() -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = loader.tour_lines(loader.read_lines())
    return bodies


def value(service: MemoryService, tenant: str, subject: str, predicate: str, **at: Any) -> Any:
    """The one value (or object) of a single-valued timeline, and the episode it cites."""
    facts = service.facts(tenant_id=tenant, subject=subject, predicate=predicate, **at)
    assert len(facts) == 1, facts
    f = facts[0]
    return (f.object if f.object is not None else f.value), f.source_episode_id


def reachable(
    service: MemoryService, tenant: str, start: str, day: str | None, **kw: Any
) -> list[str]:
    hood = service.neighbors(
        tenant_id=tenant,
        entity_id=start,
        as_of=d(day) if day else None,
        **kw,
    )
    return sorted(e.entity_id for e in hood.entities)


def check_readme_answers(service: MemoryService, tenant: str, marks: dict[str, datetime]) -> None:
    s, t = service, tenant
    harbour = "14 Harbour Street, Leith, Edinburgh EH6 6QN"
    marchmont = "7 Marchmont Road, Edinburgh EH9 1HX"
    # 1. What is true now.
    entity, facts = s.entity(tenant_id=t, entity_id="cust-ada")
    assert entity.entity_type == "Customer"
    now = {(f.subject, f.predicate): f.object or f.value for f in facts if f.predicate != "holds"}
    assert now[("cust-ada", "address")] == harbour
    assert now[("cust-ada", "tier")] == "gold"
    assert now[("clm-ada-1", "filed_by")] == "cust-ada"
    assert sorted(str(f.object) for f in facts if f.predicate == "holds") == [
        "acct-ada-1",
        "acct-ada-2",
    ]
    assert value(s, t, "pol-ada-home", "status") == ("active", "ep-ada-home-reinstated")
    assert value(s, t, "acct-ada-1", "managed_by") == ("adv-lee", "ep-khan-leaves")
    assert value(s, t, "pol-ada-car", "status") == ("expired", "ep-ada-car-switch")
    # 2. What was true on a date.
    assert value(s, t, "cust-ada", "address", as_of=d("2025-02-01")) == (
        marchmont,
        "ep-ada-welcome",
    )
    assert value(s, t, "cust-ada", "tier", as_of=d("2024-06-01")) == ("standard", "ep-ada-welcome")
    assert value(s, t, "pol-ada-home", "status", as_of=d("2025-07-01")) == (
        "lapsed",
        "ep-ada-home-lapse",
    )
    assert value(s, t, "acct-ada-1", "managed_by", as_of=d("2025-01-01")) == (
        "adv-khan",
        "ep-ada-welcome",
    )
    # 3. Customer → account → policy, as of a date.
    hop = {"depth": 2, "predicates": ["holds", "covers"]}
    assert reachable(s, t, "cust-ada", "2024-06-01", **hop) == [
        "acct-ada-1",
        "cust-ada",
        "pol-ada-home",
    ]
    assert reachable(s, t, "cust-ada", "2025-09-28", **hop) == [
        "acct-ada-1",
        "acct-ada-2",
        "cust-ada",
        "pol-ada-car",
        "pol-ada-home",
    ]
    assert reachable(s, t, "cust-ada", "2025-11-01", **hop) == [
        "acct-ada-1",
        "acct-ada-2",
        "cust-ada",
        "pol-ada-car-2",
        "pol-ada-home",
    ]
    # 4. The late correction: the signed form moved the move back to 1 March.
    assert value(s, t, "cust-ada", "address", as_of=d("2025-03-05")) == (
        harbour,
        "ep-ada-address-form",
    )
    before_form = marks["ep-ada-address-form"]
    assert value(s, t, "cust-ada", "address", as_of=d("2025-03-05"), known_at=before_form) == (
        marchmont,
        "ep-ada-welcome",
    )
    history = s.history(tenant_id=t, subject="cust-ada", predicate="address")
    assert [(f.value, f.valid_from, f.valid_to, f.sources) for f in history] == [
        (marchmont, d("2024-01-09T10:15:00"), d("2025-03-01"), ["ep-ada-welcome"]),
        (harbour, d("2025-03-01"), d("2025-03-10"), ["ep-ada-address-form"]),
        (harbour, d("2025-03-10"), None, ["ep-ada-move-call"]),
    ]
    # Ben's premium: corrected in system time (same valid_from, latest recorded wins).
    assert value(s, t, "pol-ben-home", "premium", as_of=d("2025-02-01")) == (
        1420,
        "ep-ben-premium-correction",
    )
    before_fix = marks["ep-ben-premium-correction"]
    assert value(s, t, "pol-ben-home", "premium", as_of=d("2025-02-01"), known_at=before_fix) == (
        1240,
        "ep-ben-renewal-2025",
    )
    # 5. The claim is under the policy valid on its incident date.
    assert value(s, t, "clm-ada-1", "under_policy") == ("pol-ada-car", "ep-ada-claim")
    assert value(s, t, "clm-ada-1", "incident_date") == ("2025-09-28", "ep-ada-claim")
    assert reachable(
        s, t, "acct-ada-2", "2025-09-28", predicates=["covers"], direction=Direction.IN
    ) == ["acct-ada-2", "pol-ada-car"]
    assert value(s, t, "pol-ada-car", "status", as_of=d("2025-09-28")) == ("active", "ep-ada-car")
    assert value(s, t, "clm-ada-1", "status") == ("paid", "ep-ada-claim-paid")
    assert value(s, t, "pol-ben-home", "status", as_of=d("2025-03-02")) == (
        "lapsed",
        "ep-ben-home-lapse",
    )
    assert value(s, t, "clm-ben-1", "status") == ("declined", "ep-ben-claim-decision")


def test_readme_answers_on_the_tour(service: MemoryService, tenant: str) -> None:
    marks = load(service, tenant, tour())
    check_readme_answers(service, tenant, marks)


@pytest.fixture
def sqlite_service(sqlite_store: Store) -> MemoryService:
    return MemoryService(sqlite_store)


def test_the_whole_file_loads_and_answers_the_same(
    sqlite_service: MemoryService, tenant: str
) -> None:
    bodies = list(loader.read_lines())
    assert len(bodies) > 2000
    marks = load(sqlite_service, tenant, bodies)  # raises on the first refused line
    check_readme_answers(sqlite_service, tenant, marks)
    # The one claim whose policy was not active on the incident date is Ben's.
    claims = sqlite_service.facts(tenant_id=tenant, predicate="under_policy", limit=1000)
    assert len(claims) > 50
    inactive = []
    for c in claims:
        assert c.object is not None
        incident, _ = value(sqlite_service, tenant, c.subject, "incident_date")
        status, _ = value(sqlite_service, tenant, c.object, "status", as_of=d(incident))
        if status != "active":
            inactive.append((c.subject, c.object, incident, status))
    assert inactive == [("clm-ben-1", "pol-ben-home", "2025-03-02", "lapsed")]
    # Samira Khan's accounts all moved on the day she left.
    khan = sqlite_service.facts(tenant_id=tenant, predicate="managed_by", object="adv-khan")
    assert khan == []
    moved = sqlite_service.facts(
        tenant_id=tenant, predicate="managed_by", object="adv-khan", as_of=d("2025-04-13")
    )
    assert len(moved) > 20
    assert {
        value(sqlite_service, tenant, f.subject, "managed_by", as_of=d("2025-04-14"))[1]
        for f in moved
    } == {"ep-khan-leaves"}


@pytest.fixture
def http(sqlite_store: Store) -> Iterator[SgamClient]:
    settings = Settings(port=0, log_level="warning")
    with running(settings, store=sqlite_store) as url, SgamClient(url) as client:
        yield client


def test_schema_and_tour_over_http(http: SgamClient, tenant: str) -> None:
    schema = load_schema(EXAMPLE / "schema.json")
    stored = http.put_schema(tenant, schema)
    assert stored.version == 1
    assert stored.strict
    assert loader.same_schema(stored, schema)
    assert sorted(t.name for t in stored.entity_types) == [
        "Account",
        "Advisor",
        "Claim",
        "Customer",
        "Policy",
    ]
    written = sum(loader.post_http(http, tenant, body) for body in tour())
    assert written > 100
    assert sum(loader.post_http(http, tenant, body) for body in tour()) == 0  # idempotent
    hood = http.neighbors(
        tenant, "cust-ada", depth=2, predicates=["holds", "covers"], as_of=d("2025-09-28")
    )
    assert sorted(e.entity_id for e in hood.entities) == [
        "acct-ada-1",
        "acct-ada-2",
        "cust-ada",
        "pol-ada-car",
        "pol-ada-home",
    ]
    page = http.facts(tenant, subject="pol-ada-home", predicate="status", as_of=d("2025-07-01"))
    assert [(f.value, f.source_episode_id) for f in page.facts] == [("lapsed", "ep-ada-home-lapse")]
    # The schema is strict: a tier on a policy is refused, naming why, and writes nothing.
    bad = {
        "subject": "pol-ada-home",
        "subject_type": "Policy",
        "predicate": "tier",
        "value": "gold",
        "source_episode_id": "ep-ada-home-schedule",
    }
    with pytest.raises(SgamBadRequest) as refused:
        http.write_facts(tenant, [bad])
    assert refused.value.status == 422
    assert "tier applies to ['Customer'], not Policy" in str(refused.value.problem.errors)
    assert http.facts(tenant, subject="pol-ada-home", predicate="tier").facts == []


# -- Cypher on Neo4j -------------------------------------------------------------------------
def queries(doc: Path) -> dict[str, str]:
    return dict(QUERY_RE.findall(doc.read_text(encoding="utf-8")))


def readme_queries() -> dict[str, str]:
    return queries(README)


def test_the_readme_holds_its_cypher_queries() -> None:
    assert sorted(readme_queries()) == [
        "account_advisors",
        "claims_on_inactive_policy",
        "customer_policies_on_date",
        "premium_beliefs",
    ]


@pytest.mark.neo4j
def test_readme_cypher_on_neo4j(
    nsvc: MemoryService, ntenant: str, driver: Driver, database: str
) -> None:
    marks = load(nsvc, ntenant, tour())

    def run(doc: Path, name: str, **params: Any) -> list[dict[str, Any]]:
        records, _, _ = driver.execute_query(
            queries(doc)[name], tenant_id=ntenant, database_=database, **params
        )
        return [r.data() for r in records]

    def ours(name: str, **params: Any) -> list[dict[str, Any]]:
        return run(README, name, **params)

    def rows(found: list[dict[str, Any]], *keys: str) -> list[tuple[Any, ...]]:
        return [tuple(r[k] for k in keys) for r in found]

    on = ours("customer_policies_on_date", customer="cust-ada", date="2025-07-01T00:00:00Z")
    assert rows(on, "account", "policy", "status") == [
        ("acct-ada-1", "pol-ada-home", "lapsed"),
        ("acct-ada-2", "pol-ada-car", "active"),
    ]
    on = ours("customer_policies_on_date", customer="cust-ada", date="2025-11-01T00:00:00Z")
    assert rows(on, "account", "policy", "status") == [
        ("acct-ada-1", "pol-ada-home", "active"),
        ("acct-ada-2", "pol-ada-car-2", "active"),
    ]
    assert ours("claims_on_inactive_policy") == [
        {
            "claim": "clm-ben-1",
            "policy": "pol-ben-home",
            "incident_date": "2025-03-02",
            "policy_status": "lapsed",
        }
    ]
    advisors = ours("account_advisors", customer="cust-ada", date="2025-01-01T00:00:00Z")
    assert [
        (*r[:3], r[3].to_native())
        for r in rows(advisors, "account", "advisor_then", "advisor_now", "since")
    ] == [
        ("acct-ada-1", "adv-khan", "adv-lee", d("2025-04-14")),
        ("acct-ada-2", "adv-khan", "adv-lee", d("2025-04-14")),
    ]
    beliefs = ours("premium_beliefs", policy="pol-ben-home", date="2025-02-01T00:00:00Z")
    assert [
        (p, src, retired is None)
        for p, src, retired in rows(beliefs, "premium", "source", "retired_at")
    ] == [
        (1180, "ep-ben-welcome", False),
        (1240, "ep-ben-renewal-2025", False),
        (1420, "ep-ben-premium-correction", True),
    ]

    # The predicate-neutral analyst queries of docs/graph-model.md, as the README says.
    history = run(GRAPH_MODEL, "timeline_history", subject="cust-ada", predicate="address")
    assert rows(history, "value", "source") == [
        ("7 Marchmont Road, Edinburgh EH9 1HX", "ep-ada-welcome"),
        ("14 Harbour Street, Leith, Edinburgh EH6 6QN", "ep-ada-address-form"),
        ("14 Harbour Street, Leith, Edinburgh EH6 6QN", "ep-ada-move-call"),
    ]
    belief = {
        "subject": "pol-ben-home",
        "predicate": "premium",
        "as_of": "2025-02-01T00:00:00Z",
    }
    before = marks["ep-ben-premium-correction"].isoformat()
    found = run(GRAPH_MODEL, "believed_at", known_at=before, **belief)
    assert rows(found, "value", "source") == [(1240, "ep-ben-renewal-2025")]
    found = run(GRAPH_MODEL, "believed_at", known_at=utcnow().isoformat(), **belief)
    assert rows(found, "value", "source") == [(1420, "ep-ben-premium-correction")]
    window = {"from": "2025-08-01T00:00:00Z", "to": "2025-08-20T00:00:00Z"}
    changes = run(GRAPH_MODEL, "changes_between", **window)
    assert [
        (*r[:4], r[4].to_native())
        for r in rows(changes, "subject", "predicate", "value", "change", "at")
    ] == [
        ("pol-ada-home", "status", "active", "started", d("2025-08-15")),
        ("pol-ada-home", "status", "lapsed", "ended", d("2025-08-15")),
    ]
    (claim,) = nsvc.facts(tenant_id=ntenant, subject="clm-ada-1", predicate="under_policy")
    provenance = run(GRAPH_MODEL, "fact_provenance", fact_id=claim.fact_id)
    assert rows(provenance, "episode", "kind") == [("ep-ada-claim", "message")]
    assert "car park in Leith" in provenance[0]["content"]
