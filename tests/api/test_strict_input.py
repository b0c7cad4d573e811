"""Client input the API read loosely: each is now a 422 naming the field or parameter,
writes nothing and is never a 500.

- a number or boolean sent as a string (``"confidence": "1"``) was coerced;
- a query parameter sent twice (``?subject=a&subject=b``) silently used one value;
- a paging cursor of one tenant (or list) presented by another answered an empty page;
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import AppFactory
from tests.api.helpers import episode, fact, problem


@pytest.fixture
def api(make_app: AppFactory) -> Iterator[TestClient]:
    # A 500 must come back as the answer it is, not as the server's exception.
    with TestClient(make_app(workers=0), raise_server_exceptions=False) as c:
        yield c


def seed(api: TestClient, tenant: str) -> None:
    r = api.post(f"/v1/tenants/{tenant}/episodes", json=episode("e1", extract="none"))
    assert r.status_code == 201, r.text
    facts = [
        fact("mira", "tier", value="gold"),
        fact("mira", "knows", object="bob"),
        fact("mira", "city", value="Oslo"),
    ]
    r = api.post(f"/v1/tenants/{tenant}/facts", json={"facts": facts})
    assert r.status_code == 201, r.text


def facts_of(api: TestClient, tenant: str) -> list[dict[str, Any]]:
    r = api.get(f"/v1/tenants/{tenant}/facts")
    assert r.status_code == 200, r.text
    facts: list[dict[str, Any]] = r.json()["facts"]
    return facts


# -- 1. numbers and booleans are JSON numbers and booleans --------------------------------
NOT_A_NUMBER = "Input should be a valid number"
NOT_AN_INTEGER = "Input should be a valid integer"
NOT_A_BOOLEAN = "Input should be a valid boolean"


@pytest.mark.parametrize("confidence", ["1", "0.5", True, None, [1]], ids=repr)
def test_a_fact_confidence_that_is_not_a_number_is_a_422_and_writes_nothing(
    api: TestClient, tenant: str, confidence: Any
) -> None:
    seed(api, tenant)
    before = facts_of(api, tenant)
    item = fact("mira", "age", value=41, confidence=confidence)
    r = api.post(f"/v1/tenants/{tenant}/facts", json={"facts": [fact("mira", "x", value=1), item]})
    body = problem(r, 422)
    assert body["errors"] == [
        {"reason": NOT_A_NUMBER, "index": 1, "field": "confidence", "location": "body"}
    ]
    assert body["detail"] == f"item 1 confidence: {NOT_A_NUMBER}"
    assert facts_of(api, tenant) == before


@pytest.mark.parametrize(("confidence", "stored"), [(1, 1.0), (0, 0.0), (0.25, 0.25)])
def test_a_json_integer_or_float_confidence_is_still_a_number(
    api: TestClient, tenant: str, confidence: Any, stored: float
) -> None:
    seed(api, tenant)
    item = fact("mira", "age", value=41, confidence=confidence)
    r = api.post(f"/v1/tenants/{tenant}/facts", json={"facts": [item]})
    assert r.status_code == 201, r.text
    assert r.json()["facts"][0]["confidence"] == stored


def test_an_episode_fact_confidence_as_a_string_stores_neither_episode_nor_fact(
    api: TestClient, tenant: str
) -> None:
    delta = {"subject": "mira", "predicate": "tier", "value": "gold", "confidence": "0.9"}
    r = api.post(f"/v1/tenants/{tenant}/episodes", json=episode("e9", facts=[delta]))
    body = problem(r, 422)
    assert body["errors"] == [
        {"reason": NOT_A_NUMBER, "index": 0, "field": "confidence", "location": "body"}
    ]
    problem(api.get(f"/v1/tenants/{tenant}/episodes/e9"), 404)


@pytest.mark.parametrize(
    ("path", "body", "field", "reason"),
    [
        ("search", {"query": "mira", "limit": "5"}, "limit", NOT_AN_INTEGER),
        ("search", {"query": "mira", "limit": True}, "limit", NOT_AN_INTEGER),
        ("context", {"question": "mira?", "max_facts": "3"}, "max_facts", NOT_AN_INTEGER),
        ("context", {"question": "mira?", "max_tokens": "100"}, "max_tokens", NOT_AN_INTEGER),
        ("context", {"question": "mira?", "max_tokens": False}, "max_tokens", NOT_AN_INTEGER),
    ],
)
def test_search_and_context_numbers_sent_as_strings_are_a_422_naming_them(
    api: TestClient, tenant: str, path: str, body: dict[str, Any], field: str, reason: str
) -> None:
    r = api.post(f"/v1/tenants/{tenant}/{path}", json=body)
    assert problem(r, 422)["errors"] == [{"reason": reason, "field": field, "location": "body"}]


PREDICATE = {"name": "home_address", "value_type": "string"}


def spec(**members: Any) -> dict[str, Any]:
    return {"predicates": [{**PREDICATE, **members}]}


@pytest.mark.parametrize(
    ("schema", "field", "reason"),
    [
        (spec(requires_confirmation="false"), "requires_confirmation", NOT_A_BOOLEAN),
        (spec(requires_confirmation=0), "requires_confirmation", NOT_A_BOOLEAN),
        (spec(min_support="2"), "min_support", NOT_AN_INTEGER),
        ({"version": "3"}, "version", NOT_AN_INTEGER),
    ],
)
def test_schema_numbers_and_booleans_sent_as_strings_are_a_422_and_store_nothing(
    api: TestClient, tenant: str, schema: dict[str, Any], field: str, reason: str
) -> None:
    r = api.put(f"/v1/tenants/{tenant}/schema", json=schema)
    [item] = problem(r, 422)["errors"]
    assert item["reason"] == reason
    assert item["field"].split(".")[-1] == field
    assert api.get(f"/v1/tenants/{tenant}/schema").json()["version"] == 0


def test_schema_numbers_and_booleans_as_json_are_accepted(api: TestClient, tenant: str) -> None:
    spec = {**PREDICATE, "requires_confirmation": True, "min_support": 2}
    r = api.put(f"/v1/tenants/{tenant}/schema", json={"version": 7, "predicates": [spec]})
    assert r.status_code == 200, r.text
    [stored] = r.json()["predicates"]
    assert (stored["requires_confirmation"], stored["min_support"]) == (True, 2)


# -- 2. a single-valued query parameter is sent once --------------------------------------
REPEATED = "given 2 times: this parameter takes one value"

# (path, query) of every single-valued parameter of every route that has any.
AT = "2026-06-02T00:00:00Z"
REPEATS = [
    ("facts", "subject=mira&subject=bob"),
    ("facts", "predicate=tier&predicate=city"),
    ("facts", "object=bob&object=ann"),
    ("facts", "memory_type=semantic&memory_type=profile"),
    ("facts", f"as_of={AT}&as_of={AT}"),
    ("facts", f"known_at={AT}&known_at=2026-06-03T00:00:00Z"),
    ("facts", "limit=1&limit=2"),
    ("facts", "limit=2&limit=2"),  # the same value twice is still a repeat
    ("facts", "cursor=a&cursor=b"),
    ("facts/history", "subject=mira&predicate=tier&subject=bob"),
    ("facts/history", "subject=mira&predicate=tier&predicate=city"),
    ("facts/history", "subject=mira&predicate=knows&object=bob&object=ann"),
    ("facts/history", "subject=mira&predicate=tier&limit=1&limit=5"),
    ("entities/mira", "limit=1&limit=2"),
    ("entities/mira", f"as_of={AT}&as_of={AT}"),
    ("entities/mira/neighbors", "depth=1&depth=2"),
    ("entities/mira/neighbors", "direction=out&direction=in"),
    ("entities/mira/neighbors", "limit=10&limit=20"),
    ("entities/mira/predicates", "cursor=city&cursor=knows"),
    ("episodes/e1", "limit=1&limit=2"),
    ("candidates", "status=pending&status=rejected"),
    ("candidates", "episode_id=e1&episode_id=e2"),
    ("merge-candidates", "limit=1&limit=2"),
]


@pytest.mark.parametrize(("path", "query"), REPEATS)
def test_a_repeated_single_valued_query_parameter_is_a_422_naming_it(
    api: TestClient, tenant: str, path: str, query: str
) -> None:
    seed(api, tenant)
    name = next(n for n, c in Counter(kv.split("=")[0] for kv in query.split("&")).items() if c > 1)
    body = problem(api.get(f"/v1/tenants/{tenant}/{path}?{query}"), 422)
    assert body["errors"] == [{"reason": REPEATED, "field": name, "location": "query"}]
    assert body["detail"] == f"{name}: {REPEATED}"


def test_a_list_parameter_may_still_be_repeated(api: TestClient, tenant: str) -> None:
    seed(api, tenant)
    r = api.get(f"/v1/tenants/{tenant}/entities/mira/neighbors?predicates=knows&predicates=city")
    assert r.status_code == 200, r.text
    assert [f["predicate"] for f in r.json()["facts"]] == ["knows"]


def test_parameters_sent_once_each_still_page(api: TestClient, tenant: str) -> None:
    seed(api, tenant)
    r = api.get(f"/v1/tenants/{tenant}/facts?subject=mira&limit=2&as_of={AT}")
    assert r.status_code == 200, r.text
    assert len(r.json()["facts"]) == 2


# -- 3. a cursor belongs to its tenant and its list ---------------------------------------
NOT_FOR_THIS = "not valid for this request: it was issued for another tenant or list"


def seed_pages(api: TestClient, tenant: str) -> None:
    """Every paged list of the tenant has a second page at limit=1."""
    seed(api, tenant)
    later = fact("mira", "city", value="Lyon", valid_from="2026-06-05T00:00:00Z")
    r = api.post(f"/v1/tenants/{tenant}/facts", json={"facts": [later]})
    assert r.status_code == 201, r.text


# (path, query) of each list answering next_cursor, at one item a page.
LISTS = {
    "facts": ("facts", {"subject": "mira", "limit": 1}),
    "history": ("facts/history", {"subject": "mira", "predicate": "city", "limit": 1}),
    "entity": ("entities/mira", {"limit": 1}),
    "episode": ("episodes/e1", {"limit": 1}),
}


def first_cursor(api: TestClient, tenant: str, name: str) -> str:
    path, query = LISTS[name]
    r = api.get(f"/v1/tenants/{tenant}/{path}", params=query)
    assert r.status_code == 200, r.text
    cursor: str = r.json()["next_cursor"]
    assert cursor
    return cursor


def page(api: TestClient, tenant: str, name: str, cursor: str) -> Any:
    path, query = LISTS[name]
    return api.get(f"/v1/tenants/{tenant}/{path}", params={**query, "cursor": cursor})


@pytest.mark.parametrize("name", sorted(LISTS))
def test_a_cursor_of_another_tenant_is_a_422_and_reveals_nothing(
    api: TestClient, tenant: str, other_tenant: str, name: str
) -> None:
    seed_pages(api, tenant)
    seed_pages(api, other_tenant)  # the same ids and filters: only the tenant differs
    theirs = first_cursor(api, other_tenant, name)
    body = problem(page(api, tenant, name, theirs), 422)
    assert body["errors"] == [{"reason": NOT_FOR_THIS, "field": "cursor"}]
    assert body["detail"] == f"cursor: {NOT_FOR_THIS}"
    assert other_tenant not in json.dumps(body)
    # It still pages for the tenant it was issued for.
    r = page(api, other_tenant, name, theirs)
    assert r.status_code == 200, r.text
    assert r.json()["facts"]


@pytest.mark.parametrize(
    ("issued", "presented"),
    [("facts", "history"), ("history", "facts"), ("entity", "episode"), ("episode", "entity")],
)
def test_a_cursor_of_another_list_is_a_422_naming_it(
    api: TestClient, tenant: str, issued: str, presented: str
) -> None:
    seed_pages(api, tenant)
    cursor = first_cursor(api, tenant, issued)
    body = problem(page(api, tenant, presented, cursor), 422)
    assert body["errors"] == [{"reason": NOT_FOR_THIS, "field": "cursor"}]


def test_a_cursor_without_its_tenant_is_not_a_cursor_of_this_api(
    api: TestClient, tenant: str
) -> None:
    seed_pages(api, tenant)
    cursor = first_cursor(api, tenant, "facts")
    data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    assert data["tenant"] == tenant
    del data["tenant"]
    unbound = base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")
    body = problem(page(api, tenant, "facts", unbound), 422)
    assert body["errors"] == [{"reason": "not a cursor returned by this API", "field": "cursor"}]


def test_an_entity_cursor_of_this_tenant_without_as_of_is_not_a_cursor(
    api: TestClient, tenant: str
) -> None:
    """The shape checks still run on a cursor bound to the right tenant and list."""
    seed_pages(api, tenant)
    cursor = first_cursor(api, tenant, "entity")
    data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    data["as_of"] = None
    forged = base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")
    body = problem(page(api, tenant, "entity", forged), 422)
    assert body["errors"] == [{"reason": "not a cursor returned by this API", "field": "cursor"}]
