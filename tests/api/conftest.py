"""Fixtures of the API suite: apps built on the ``store`` fixture (SQLite and Neo4j).

Each test gets its own tenants (``tenant`` from the root conftest, ``other_tenant`` here)
so tests never see or wipe each other's data.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.app import create_app
from api.settings import Settings
from graph.port import Store

AppFactory = Callable[..., FastAPI]


@pytest.fixture
def other_tenant(store: Store) -> Iterator[str]:
    t = "u-" + uuid.uuid4().hex[:12]
    yield t
    store.purge_tenant(tenant_id=t)


@pytest.fixture
def make_app(store: Store) -> AppFactory:
    """Build an app on the test's store with these settings (keyword overrides)."""

    def build(**overrides: Any) -> FastAPI:
        return create_app(Settings(**overrides), store=store)

    return build


@pytest.fixture
def app(make_app: AppFactory) -> FastAPI:
    """An open app (no keys), as ``sgam serve`` runs on loopback by default."""
    return make_app()


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c
