"""The paged lists' Cypher reads a page in an index's order on Neo4j: an index seek that
provides the list's order, cut by LIMIT (or PartialTop: the ties of one created_at sorted
by id), never every row of the tenant (or of the predicate) sorted by Top or Sort.

test_neo4j_plans.py checks that no template scans across tenants; a seek by tenant (or
by predicate) followed by a Top passes that check while it reads the whole tenant's
candidates, entities or facts of the predicate for each page.
"""

from __future__ import annotations

from typing import Any

import pytest
from neo4j import GraphDatabase

from graph.port import Store
from graph.stores.neo4j.templates import load_templates

pytestmark = pytest.mark.neo4j

# Templates whose page is read in an index's order.
IN_ORDER = (
    "facts.by_predicate",
    "queue.candidates_list",
    "queue.candidates_list_all",
    "queue.merge_list",
    "queue.merge_list_all",
    "queue.entity_catalog",
)
SORTS = ("Top", "Sort")


def operators(plan: Any) -> list[tuple[str, Any]]:
    """(operator, plan) of the plan and every operator below it."""
    op = plan["operatorType"].split("@")[0]
    return [(op, plan)] + [o for child in plan.get("children", []) for o in operators(child)]


def explain(uri: str, statement: str) -> Any:
    with GraphDatabase.driver(uri, notifications_min_severity="OFF") as driver:
        driver.execute_query("CALL db.awaitIndexes(300)")
        with driver.session() as session:
            summary = session.run("EXPLAIN " + statement).consume()  # type: ignore[arg-type]
    assert summary.plan is not None
    return summary.plan


@pytest.fixture(scope="module")
def ready(neo4j_store: Store) -> None:
    neo4j_store.queue.init()  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", IN_ORDER)
def test_a_page_is_read_in_index_order(ready: None, neo4j_uri: str, name: str) -> None:
    plan = explain(neo4j_uri, load_templates()[name].text)
    ops = [op for op, _ in operators(plan)]
    assert not [op for op in ops if op in SORTS], ops
    assert any(op in ("Limit", "PartialTop") for op in ops), ops
    assert any("IndexSeek" in op for op in ops), ops


def test_the_catalog_of_some_types_reads_a_page_of_each_in_order(
    ready: None, neo4j_uri: str
) -> None:
    """A page of each type in index order, then the newest of those pages: the one Top
    sorts at most (types x limit) rows, above the per-type reads."""
    plan = explain(neo4j_uri, load_templates()["queue.entity_catalog_types"].text)
    (apply,) = [p for op, p in operators(plan) if op == "Apply"]
    below = [op for op, _ in operators(apply)]
    assert not [op for op in below if op in SORTS], below
    assert "PartialTop" in below
    assert any("IndexSeek" in op for op in below), below
