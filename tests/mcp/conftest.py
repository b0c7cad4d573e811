"""Fixtures of the MCP suite (the checks they share are in :mod:`tests.mcp.scenario`)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from graph.port import Store


@pytest.fixture
def other_tenant(store: Store) -> Iterator[str]:
    t = "u-" + uuid.uuid4().hex[:12]
    yield t
    store.purge_tenant(tenant_id=t)
