"""The store's and the queue's public read methods, on a real Neo4j, issue only read
templates, each as a managed READ transaction; a write goes through a WRITE transaction.

A recorder wraps the real driver and names the template of every statement it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import neo4j
import pytest
from neo4j import RoutingControl

from graph.model import Direction, EpisodeCreate, FactQuery, MemoryDelta
from graph.port import Store
from graph.service import MemoryService
from graph.stores.neo4j.store import Neo4jStore

pytestmark = pytest.mark.neo4j

T0 = datetime(2025, 1, 1, tzinfo=UTC)


class Recorder:
    """The real driver, with every managed call and session recorded."""

    def __init__(self, real: Any, statements: dict[str, tuple[str, str]]) -> None:
        self.real = real
        self.statements = statements  # statement text -> (template name, mode)
        self.managed: list[tuple[str, str, RoutingControl]] = []
        self.sessions: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def execute_query(self, query: str, params: Any, **kw: Any) -> Any:
        name, mode = self.statements[query]
        self.managed.append((name, mode, kw["routing_"]))
        return self.real.execute_query(query, params, **kw)

    def session(self, **config: Any) -> Any:
        self.sessions.append(config["default_access_mode"])
        return self.real.session(**config)


@pytest.fixture
def recorded(neo4j_store: Store, ntenant: str) -> Any:
    assert isinstance(neo4j_store, Neo4jStore)
    svc = MemoryService(neo4j_store)
    svc.add_episode(
        tenant_id=ntenant, body=EpisodeCreate(episode_id="ep1", content="hi", occurred_at=T0)
    )
    svc.write_facts(
        tenant_id=ntenant,
        deltas=[
            MemoryDelta(subject="ann", predicate="knows", object="bob", source_episode_id="ep1"),
            MemoryDelta(subject="ann", predicate="status", value="gold", source_episode_id="ep1"),
        ],
    )
    # The queue creates its schema on first use (a write, routed WRITE): done here, so
    # that what is recorded is the reads themselves.
    neo4j_store.queue.init()
    conn = neo4j_store.conn
    statements: dict[str, tuple[str, str]] = {
        s: (t.name, t.mode) for t in conn.templates.values() for s in t.statements
    }
    real = conn.driver
    rec = Recorder(real, statements)
    conn.driver = rec  # type: ignore[assignment]
    yield neo4j_store, svc, rec
    conn.driver = real


def read_calls(store: Neo4jStore, tenant: str) -> dict[str, Callable[[], object]]:
    now = datetime.now(UTC)
    q = store.queue
    return {
        "get_episode": lambda: store.get_episode(tenant_id=tenant, episode_id="ep1"),
        "facts.subject": lambda: store.facts(
            tenant_id=tenant, query=FactQuery(subject="ann", as_of=now, known_at=now)
        ),
        "facts.object": lambda: store.facts(
            tenant_id=tenant, query=FactQuery(object="bob", as_of=now, known_at=now)
        ),
        "facts.predicate": lambda: store.facts(
            tenant_id=tenant, query=FactQuery(predicate="status", as_of=now, known_at=now)
        ),
        "facts.source": lambda: store.facts(
            tenant_id=tenant, query=FactQuery(source_episode_id="ep1", as_of=now, known_at=now)
        ),
        "facts.tenant": lambda: store.facts(
            tenant_id=tenant, query=FactQuery(as_of=now, known_at=now)
        ),
        "history": lambda: store.history(
            tenant_id=tenant, subject="ann", predicate="status", object=None, known_at=now
        ),
        "entity": lambda: store.entity(tenant_id=tenant, entity_id="ann"),
        "neighbors": lambda: store.neighbors(
            tenant_id=tenant,
            entity_id="ann",
            depth=2,
            predicates=None,
            direction=Direction.BOTH,
            as_of=now,
            known_at=now,
        ),
        "get_schema": lambda: store.get_schema(tenant_id=tenant),
        "expired_timelines": lambda: store.expired_timelines(
            tenant_id=tenant, predicate="status", before=now
        ),
        "ping": store.ping,
        "queue_counts": lambda: q.queue_counts(tenant_id=tenant),
        "queue_counts_all": lambda: q.queue_counts(),
        "candidates": lambda: q.candidates(
            tenant_id=tenant, status=None, episode_id=None, limit=10
        ),
        "candidate": lambda: q.candidate(tenant_id=tenant, candidate_id="nope"),
        "merge_candidates": lambda: q.merge_candidates(tenant_id=tenant, status=None, limit=10),
        "merge_candidate": lambda: q.merge_candidate(tenant_id=tenant, candidate_id="nope"),
        "entity_catalog": lambda: q.entity_catalog(tenant_id=tenant, entity_types=None, limit=10),
        "session_entities": lambda: q.session_entities(tenant_id=tenant, session_id="s", limit=5),
    }


def test_every_public_read_runs_read_templates_in_read_transactions(
    recorded: Any, ntenant: str
) -> None:
    store, _, rec = recorded
    for label, call in read_calls(store, ntenant).items():
        rec.managed.clear()
        call()
        assert rec.sessions == [], f"{label} opened an explicit transaction"
        assert rec.managed, f"{label} ran nothing"
        for name, mode, routing in rec.managed:
            assert mode == "read", f"{label} ran the write template {name}"
            assert routing == RoutingControl.READ, f"{label} ran {name} routed {routing}"


def test_a_write_runs_in_a_write_transaction(recorded: Any, ntenant: str) -> None:
    _, svc, rec = recorded
    svc.write_facts(
        tenant_id=ntenant,
        deltas=[MemoryDelta(subject="cid", predicate="age", value=3, source_episode_id="ep1")],
    )
    assert rec.sessions == [neo4j.WRITE_ACCESS]
    # Outside the transaction only reads (the tenant's schema) ran, and routed READ.
    assert rec.managed
    assert all(
        mode == "read" and routing == RoutingControl.READ for _, mode, routing in rec.managed
    )
