"""Neo4j settings from the environment (the store's behaviour with them is tested against
a real server in tests/integration/test_neo4j_store.py)."""

from __future__ import annotations

import pytest

from graph.stores.neo4j.connection import auth_from_env, database_from_env, strip_credentials


@pytest.mark.parametrize(
    ("env", "auth"),
    [
        ({}, None),
        ({"SGAM_NEO4J_PASSWORD": "s3cret"}, ("neo4j", "s3cret")),  # the user defaults
        ({"SGAM_NEO4J_USER": "app"}, ("app", "")),
        ({"SGAM_NEO4J_USER": "app", "SGAM_NEO4J_PASSWORD": "s3cret"}, ("app", "s3cret")),
    ],
)
def test_the_credentials_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], auth: tuple[str, str] | None
) -> None:
    for name in ("SGAM_NEO4J_USER", "SGAM_NEO4J_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert auth_from_env() == auth


def test_the_database_defaults_to_neo4j(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SGAM_NEO4J_DATABASE", raising=False)
    assert database_from_env() == "neo4j"
    monkeypatch.setenv("SGAM_NEO4J_DATABASE", "memories")
    assert database_from_env() == "memories"


def test_credentials_never_reach_the_store_url() -> None:
    assert strip_credentials("neo4j://app:s3cret@db.example:7687") == "neo4j://db.example:7687"
