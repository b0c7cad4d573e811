"""Every Cypher template plans its reads by index seeks within one tenant: none scans a
whole label, relationship type or index, so no tenant's query costs more because other
tenants hold more data.

Plans are asked of the real server (EXPLAIN runs nothing) after every setup of the store
has created its indexes. Plans follow statistics, and a store's first tenants are few
and small: the templates name their index where the planner would otherwise scan, and
this test also fails when a hint names an index that does not exist (the server ignores
such a hint with only a notification).
"""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import GraphDatabase

from graph.port import Store
from graph.stores.neo4j.templates import load_templates

pytestmark = pytest.mark.neo4j

# Operators that read every entry of a label, a relationship type or an index.
SCANS = (
    "AllNodesScan",
    "NodeByLabelScan",
    "NodeIndexScan",
    "NodeIndexContainsScan",
    "NodeIndexEndsWithScan",
    "RelationshipTypeScan",
    "RelationshipIndexScan",
    "RelationshipIndexContainsScan",
    "RelationshipIndexEndsWithScan",
)

# Templates that read across tenants by design, each with why.
ACROSS_TENANTS = {
    "queue.counts": "the whole queue's depth by status, for /metrics",
    "retention.tenants": "the tenants with a schema (one Schema node per version)",
    "search.backfill_tenants": "the fulltext migration: tenants with nodes lacking terms, once",
    "search.fact_vector_tenants": "the fact vector migration: tenants with FactVectors lacking "
    "their scope keys, once",
}


def scans(plan: dict[str, Any]) -> list[str]:
    op = plan["operatorType"].split("@")[0]
    here = [f"{op}: {plan.get('args', {}).get('Details', '')}"] if op.endswith(SCANS) else []
    return here + [s for child in plan.get("children", []) for s in scans(child)]


def test_no_template_scans_across_tenants(neo4j_store: Store, neo4j_uri: str) -> None:
    search: Any = neo4j_store.search
    search.init()
    search.pending(model="plans-test")  # its own indexes
    neo4j_store.queue.init()  # type: ignore[attr-defined]
    checked = 0
    found: dict[str, list[str]] = {}
    hints: dict[str, list[str]] = {}
    with GraphDatabase.driver(neo4j_uri, notifications_min_severity="WARNING") as driver:
        # An index still populating (one an earlier test recreated) is not planned: the
        # plan would scan, and a hint naming it would go unmet.
        driver.execute_query("CALL db.awaitIndexes(300)")
        for name, template in sorted(load_templates().items()):
            for statement in template.statements:
                head = statement.lstrip().upper()
                if head.startswith(("CREATE ", "DROP ", "CALL DB.")):
                    continue  # schema statements: nothing to plan
                with driver.session() as session:
                    summary = session.run("EXPLAIN " + statement).consume()  # type: ignore[arg-type]
                assert summary.plan is not None, name
                checked += 1
                if name not in ACROSS_TENANTS and (bad := scans(summary.plan)):
                    found[name] = bad
                unmet = [
                    g.status_description
                    for g in summary.gql_status_objects
                    if g.raw_classification == "HINT"
                ]
                if unmet:
                    hints[name] = unmet
    assert checked > 100
    assert not found, found
    assert not hints, hints


def test_the_checks_see_a_scan_and_an_unmet_hint(neo4j_uri: str) -> None:
    """The checks above would pass vacuously if no plan ever showed them a scan or a
    hint the server could not follow."""
    driver = GraphDatabase.driver(neo4j_uri, notifications_min_severity="WARNING")
    with driver, driver.session() as session:
        summary = session.run(
            "EXPLAIN MATCH (e:Episode) USING INDEX e:Episode(no_such_property) "
            "WHERE e.no_such_property = 1 RETURN count(e.status)"
        ).consume()
    assert summary.plan is not None
    assert any(s.startswith("NodeByLabelScan") for s in scans(summary.plan)), summary.plan
    assert [g.gql_status for g in summary.gql_status_objects if g.raw_classification == "HINT"] == [
        "01N31"
    ]
