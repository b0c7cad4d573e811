"""Shared fixtures: real stores only.

``store`` runs a test once per store: SQLite in a temporary file, and Neo4j — from
NEO4J_URI, else testcontainers when a Docker engine answers, else the project's own
embedded-server launcher (tools/neo4j/neo4j.sh). Without any of them the Neo4j cases
skip with the reason on a laptop and fail when SGAM_REQUIRE_NEO4J=1 (CI).

Every test gets its own tenant id, so tests never wipe data they did not create.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from extraction.llm import LlmExtractor
from extraction.loopback import LoopbackLLM
from graph.port import Store
from graph.service import MemoryService
from graph.stores.sqlite.store import SqliteStore

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "examples" / "scenarios"


def _docker_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        out = subprocess.run(
            ["docker", "info"],
            capture_output=True,
            timeout=10,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0


def wait_until(predicate: Callable[[], bool], seconds: float = 10.0) -> None:
    """Poll ``predicate`` until it holds; fail the test after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


@pytest.fixture(scope="session")
def neo4j_uri() -> Iterator[str]:
    """A reachable Neo4j's bolt URI, or skip (fail in CI) with the reason."""
    uri = os.environ.get("NEO4J_URI")
    if uri:
        yield uri
        return
    if _docker_answers():
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:2026.09.0-community").with_env("NEO4J_AUTH", "none") as c:
            yield c.get_connection_url()
        return
    launcher = ROOT / "tools" / "neo4j" / "neo4j.sh"
    reason = "no NEO4J_URI, no Docker engine"
    if launcher.exists() and shutil.which("java") and shutil.which("mvn"):
        status = subprocess.run(
            ["bash", str(launcher), "status"], capture_output=True, timeout=60, check=False
        )
        already_running = status.returncode == 0  # someone else's server: leave it running
        started = subprocess.run(
            ["bash", str(launcher), "up"],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        lines = started.stdout.strip().splitlines()
        if started.returncode == 0 and lines and lines[-1].startswith("bolt://"):
            try:
                yield lines[-1]
            finally:
                if not already_running:
                    subprocess.run(["bash", str(launcher), "down"], check=False, timeout=120)
            return
        reason += f", and the launcher failed: {started.stderr[-2000:]}"
    else:
        reason += ", and the launcher needs java and mvn"
    if os.environ.get("SGAM_REQUIRE_NEO4J") == "1":
        pytest.fail(f"Neo4j is required (SGAM_REQUIRE_NEO4J=1) but unavailable: {reason}")
    pytest.skip(f"Neo4j unavailable: {reason}")


@pytest.fixture
def tenant() -> str:
    return "t-" + uuid.uuid4().hex[:12]


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(tmp_path / "sgam.db")
    s.init()
    yield s
    s.close()


@pytest.fixture(scope="session")
def neo4j_store(neo4j_uri: str) -> Iterator[Store]:
    from graph.stores.neo4j.store import Neo4jStore

    s = Neo4jStore.from_url(neo4j_uri)
    s.init()
    yield s
    s.close()


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(request: pytest.FixtureRequest, tenant: str) -> Iterator[Store]:
    """Each store in turn; Neo4j data of the test's tenant is purged afterwards."""
    if request.param == "sqlite":
        yield request.getfixturevalue("sqlite_store")
        return
    s: Store = request.getfixturevalue("neo4j_store")
    try:
        yield s
    finally:
        s.purge_tenant(tenant_id=tenant)


@pytest.fixture
def service(store: Store) -> MemoryService:
    return MemoryService(store)


@pytest.fixture
def llm() -> Iterator[LoopbackLLM]:
    """A chat-completions server on loopback that answers as each test scripts it."""
    with LoopbackLLM() as server:
        yield server


@pytest.fixture
def model(llm: LoopbackLLM) -> Iterator[LlmExtractor]:
    """The LLM extractor pointed at :func:`llm`."""
    ex = LlmExtractor(base_url=llm.base_url, model="loopback")
    yield ex
    ex.close()
