"""Fixtures for tests against a real Neo4j: a raw driver and a tenant that is purged after."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from neo4j import Driver, GraphDatabase

from graph.port import Store
from graph.service import MemoryService


@pytest.fixture(scope="session")
def driver(neo4j_uri: str) -> Iterator[Driver]:
    """A raw driver, for checking what the store wrote with the database's own eyes."""
    user = os.environ.get("SGAM_NEO4J_USER")
    auth = (user, os.environ.get("SGAM_NEO4J_PASSWORD", "")) if user else None
    d = GraphDatabase.driver(neo4j_uri, auth=auth, notifications_min_severity="OFF")
    yield d
    d.close()


@pytest.fixture(scope="session")
def database() -> str:
    return os.environ.get("SGAM_NEO4J_DATABASE") or "neo4j"


@pytest.fixture
def ntenant(neo4j_store: Store) -> Iterator[str]:
    """A fresh tenant on the shared Neo4j; everything it wrote is purged afterwards."""
    tenant = "it-" + uuid.uuid4().hex[:12]
    try:
        yield tenant
    finally:
        neo4j_store.purge_tenant(tenant_id=tenant)


@pytest.fixture
def nsvc(neo4j_store: Store) -> MemoryService:
    return MemoryService(neo4j_store)
