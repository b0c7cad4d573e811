"""Review M6: an entity type may not be one of the labels a store uses for its own records
(a user's ``Value`` entity would be matched, locked and deleted as a value node)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from graph.model import RESERVED_TYPE_NAMES
from tests.api.helpers import episode, fact, problem


def _base(tenant: str) -> str:
    return f"/v1/tenants/{tenant}"


@pytest.mark.parametrize("name", ["Value", "Episode", "Assertion", "Timeline"])
def test_a_schema_naming_a_reserved_type_is_422_naming_it(
    client: TestClient, tenant: str, name: str
) -> None:
    for body, field in (
        ({"entity_types": [{"name": "Person"}, {"name": name}]}, "entity_types.1.name"),
        (
            {"predicates": [{"name": "owns", "object_type": name}]},
            "predicates.0.object_type",
        ),
        (
            {"predicates": [{"name": "age", "value_type": "number", "subject_types": [name]}]},
            "predicates.0.subject_types.0",
        ),
    ):
        out = problem(client.put(f"{_base(tenant)}/schema", json=body), 422)
        assert [e["field"] for e in out["errors"]] == [field]
        assert f"entity type {name!r} is reserved" in out["errors"][0]["reason"]
    assert client.get(f"{_base(tenant)}/schema").json()["version"] == 0  # nothing stored


def test_a_schema_may_not_declare_the_generic_type(client: TestClient, tenant: str) -> None:
    out = problem(
        client.put(f"{_base(tenant)}/schema", json={"entity_types": [{"name": "Entity"}]}), 422
    )
    assert "'Entity' is reserved" in out["detail"]


def test_writes_naming_a_reserved_type_are_422_and_write_nothing(
    client: TestClient, tenant: str
) -> None:
    base = _base(tenant)
    assert client.post(f"{base}/episodes", json=episode("e1")).status_code == 201
    batch = {
        "facts": [
            fact("ann", "city", value="Lyon", subject_type="Person"),
            fact("v1", "price", value=3, subject_type="Value"),
            fact("ann", "owns", object="x", object_type="Episode"),
        ]
    }
    out = problem(client.post(f"{base}/facts", json=batch), 422)
    assert [(e["index"], e["field"]) for e in out["errors"]] == [
        (1, "subject_type"),
        (2, "object_type"),
    ]
    assert "'Value' is reserved" in out["errors"][0]["reason"]
    assert "'Episode' is reserved" in out["errors"][1]["reason"]
    assert client.get(f"{base}/facts").json()["facts"] == []
    for eid in ("ann", "v1", "x"):
        problem(client.get(f"{base}/entities/{eid}"), 404)
    # Inline facts of an episode are refused alike, and the episode is not kept.
    inline = episode(
        "e2", facts=[{"subject": "v", "subject_type": "Value", "predicate": "p", "value": 1}]
    )
    problem(client.post(f"{base}/episodes", json=inline), 422)
    problem(client.get(f"{base}/episodes/e2"), 404)
    # The generic type stays usable on writes.
    ok = {"facts": [fact("ann", "city", value="Lyon", subject_type="Entity")]}
    assert client.post(f"{base}/facts", json=ok).status_code == 201


def test_the_reserved_names_are_the_stores_own_labels() -> None:
    """Every node label the Cypher templates use is reserved (or is the generic Entity)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "cypher"
    labels: set[str] = set()
    for path in root.glob("*.cypher"):
        labels |= set(re.findall(r"\(\w*:([A-Z]\w*)", path.read_text()))
    assert labels - {"Entity"} <= RESERVED_TYPE_NAMES
    assert {"Value", "Episode", "Assertion", "Timeline", "Schema"} <= labels
