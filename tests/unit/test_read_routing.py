"""Every read template runs as a READ transaction and every write one as a WRITE one, on
the configured database (cluster routing, issue: clusters and Aura).

The driver here is a recorder, not a database: what is checked is the call the connection
makes, which is the whole of the routing decision. tests/integration/test_read_routing.py
checks the same on the store's public read methods against a real Neo4j.
"""

from __future__ import annotations

from typing import Any, cast

import neo4j
import pytest
from neo4j import Driver, RoutingControl

from graph.stores.neo4j.connection import Neo4jConnection
from graph.stores.neo4j.templates import load_templates

TEMPLATES = load_templates()


class RecordingDriver:
    """Records execute_query's routing and database, and the sessions opened."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, RoutingControl, str]] = []
        self.sessions: list[dict[str, Any]] = []
        self.execute_query_bookmark_manager = object()

    def execute_query(
        self, query: str, params: Any, *, database_: str, routing_: RoutingControl
    ) -> tuple[list[Any], None, None]:
        self.calls.append((query, routing_, database_))
        return [], None, None

    def session(self, **config: Any) -> Any:
        self.sessions.append(config)
        raise RuntimeError("recorded")


def connection() -> tuple[Neo4jConnection, RecordingDriver]:
    driver = RecordingDriver()
    return Neo4jConnection(cast(Driver, driver), database="tenantdb"), driver


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_each_template_runs_in_the_transaction_mode_it_declares(name: str) -> None:
    t = TEMPLATES[name]
    conn, driver = connection()
    conn.run(name, dict.fromkeys(t.params))
    want = RoutingControl.READ if t.mode == "read" else RoutingControl.WRITE
    assert [r for _, r, _ in driver.calls] == [want] * len(t.statements)
    assert {d for _, _, d in driver.calls} == {"tenantdb"}
    assert [q for q, _, _ in driver.calls] == list(t.statements)


def test_both_modes_are_exercised() -> None:
    modes = {t.mode for t in TEMPLATES.values()}
    assert modes == {"read", "write"}


def test_an_explicit_transaction_is_a_write_one_on_the_database_with_shared_bookmarks() -> None:
    conn, driver = connection()
    with pytest.raises(RuntimeError, match="recorded"), conn.transaction():
        pass
    (config,) = driver.sessions
    assert config["default_access_mode"] == neo4j.WRITE_ACCESS
    assert config["database"] == "tenantdb"
    # The same bookmark manager as the managed reads: a read sees this transaction's write.
    assert config["bookmark_manager"] is driver.execute_query_bookmark_manager
