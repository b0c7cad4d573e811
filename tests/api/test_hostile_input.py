"""Requests a hostile or broken client sends: each is a 4xx naming what is wrong, never a
500, and a refused one writes nothing. Found by probing a running server
(``sgam serve``) with forged cursors, odd timestamps and odd bodies.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import AppFactory
from tests.api.helpers import episode, fact, problem


@pytest.fixture
def api(make_app: AppFactory) -> Iterator[TestClient]:
    # A 500 must come back as the answer it is, not as the server's exception.
    with TestClient(make_app(), raise_server_exceptions=False) as c:
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


# -- forged cursors ----------------------------------------------------------------------
def forge(payload: Any) -> str:
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


FACTS_FILTERS = {"subject": None, "predicate": None, "object": None, "memory_type": None}
NOW = "2026-06-02T00:00:00Z"


# Stands for the tenant of the test: a forged cursor must pass the tenant and list check
# so that the check it aims at is the one that refuses it.
TENANT = "@TENANT@"


def cursor_of(
    after: list[str],
    *,
    kind: str = "facts",
    filters: dict[str, Any],
    as_of: str | None = NOW,
    known_at: Any = NOW,
) -> dict[str, Any]:
    return {
        "v": 1,
        "tenant": TENANT,
        "list": kind,
        "after": after,
        "as_of": as_of,
        "known_at": known_at,
        "filters": filters,
    }


FORGED = {
    # A lone surrogate in the keyset: JSON carries it, the store's driver cannot.
    "lone surrogate": (
        "facts",
        forge(
            b'{"v": 1, "tenant": "@TENANT@", "list": "facts",'
            b' "after": ["\\ud800", "p", "f"], "as_of": "2026-06-02T00:00:00Z",'
            b' "known_at": "2026-06-02T00:00:00Z", "filters": {"subject": null,'
            b' "predicate": null, "object": null, "memory_type": null}}'
        ),
    ),
    # Nested past the JSON parser's stack (a RecursionError).
    "deep nesting": ("facts", forge(b"[" * 3000)),
    # An entity page is a read at one valid time: no as_of is no cursor of it.
    "entity without as_of": (
        "entities/mira",
        forge(
            cursor_of(
                ["out", "mira", "city", "f_x"],
                kind="entity",
                filters={"entity": "mira"},
                as_of=None,
            )
        ),
    ),
    # A time outside the range every timestamp of the API has (0001-01-02 … 9999-12-30).
    "time out of range": (
        "facts",
        forge(cursor_of(["a", "p", "f"], filters=FACTS_FILTERS, known_at="0001-01-01T00:00:00Z")),
    ),
}


@pytest.mark.parametrize("name", sorted(FORGED))
def test_a_forged_cursor_is_a_422_naming_the_cursor(
    api: TestClient, tenant: str, name: str
) -> None:
    seed(api, tenant)
    path, template = FORGED[name]
    cursor = forge(
        base64.urlsafe_b64decode(template + "==").replace(TENANT.encode(), tenant.encode())
    )
    r = api.get(f"/v1/tenants/{tenant}/{path}", params={"cursor": cursor})
    body = problem(r, 422)
    assert body["detail"] == "cursor: not a cursor returned by this API"
    assert body["errors"] == [{"reason": "not a cursor returned by this API", "field": "cursor"}]


def test_a_real_cursor_still_pages(api: TestClient, tenant: str) -> None:
    seed(api, tenant)
    r = api.get(f"/v1/tenants/{tenant}/facts", params={"limit": 2})
    assert r.status_code == 200, r.text
    first = r.json()
    assert len(first["facts"]) == 2
    assert first["next_cursor"]
    r = api.get(f"/v1/tenants/{tenant}/facts", params={"limit": 2, "cursor": first["next_cursor"]})
    assert r.status_code == 200, r.text
    assert [f["predicate"] for f in r.json()["facts"]] == ["tier"]
    assert r.json()["next_cursor"] is None


# -- search and context times ------------------------------------------------------------
OUT_OF_RANGE = "timestamp out of range: must fall between 0001-01-02 and 9999-12-30 (UTC)"


@pytest.mark.parametrize(
    ("path", "text"), [("search", "query"), ("context", "question")], ids=["search", "context"]
)
@pytest.mark.parametrize("field", ["as_of", "known_at"])
@pytest.mark.parametrize(
    "instant",
    [
        "0001-01-01T00:30:00+01:00",  # no UTC form at all: an OverflowError (500) in the store
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z",
    ],
)
def test_search_and_context_times_are_in_range_like_every_timestamp(
    api: TestClient, tenant: str, path: str, text: str, field: str, instant: str
) -> None:
    seed(api, tenant)
    r = api.post(f"/v1/tenants/{tenant}/{path}", json={text: "mira tier", field: instant})
    body = problem(r, 422)
    assert body["detail"] == f"{field}: {OUT_OF_RANGE}"
    assert body["errors"] == [{"reason": OUT_OF_RANGE, "field": field, "location": "body"}]


def test_search_times_answer_in_utc_whatever_the_offset(api: TestClient, tenant: str) -> None:
    seed(api, tenant)
    r = api.post(
        f"/v1/tenants/{tenant}/context",
        json={"question": "What is mira's tier?", "as_of": "2026-06-01T11:30:00+02:00"},
    )
    assert r.status_code == 200, r.text
    assert [f["value"] for f in r.json()["facts"] if f["predicate"] == "tier"] == ["gold"]


# -- forget: dry_run is a boolean --------------------------------------------------------
@pytest.mark.parametrize("dry_run", ["no", "false", 0, "yes", 1, "on", None])
def test_forget_dry_run_that_is_not_a_boolean_is_a_422_and_erases_nothing(
    api: TestClient, tenant: str, dry_run: Any
) -> None:
    seed(api, tenant)
    r = api.post(f"/v1/tenants/{tenant}/entities/mira/forget", json={"dry_run": dry_run})
    body = problem(r, 422)
    assert body["detail"] == "dry_run: Input should be a valid boolean"
    assert body["errors"] == [
        {"reason": "Input should be a valid boolean", "field": "dry_run", "location": "body"}
    ]
    r = api.get(f"/v1/tenants/{tenant}/entities/mira")
    assert r.status_code == 200, r.text
    assert sorted(f["predicate"] for f in r.json()["facts"]) == ["city", "knows", "tier"]


def test_forget_dry_run_true_counts_and_keeps(api: TestClient, tenant: str) -> None:
    seed(api, tenant)
    r = api.post(f"/v1/tenants/{tenant}/entities/mira/forget", json={"dry_run": True})
    assert r.status_code == 200, r.text
    assert r.json()["dry_run"] is True
    assert r.json()["facts"] == 3
    assert api.get(f"/v1/tenants/{tenant}/entities/mira").status_code == 200


# -- PUT /schema reads JSON only ---------------------------------------------------------
NAN_MAPPING = (
    b'{"event_mappings": [{"event_type": "x.y", "subject": {"field": "id", "type": "Customer"},'
    b' "facts": [{"predicate": "score", "value": NaN}]}]}'
)
BIG_MAPPING = NAN_MAPPING.replace(b"NaN", b"100000000000000000000000000000")
NOT_JSON = "the body must be JSON, sent with content-type: application/json"


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
@pytest.mark.parametrize("raw", [NAN_MAPPING, BIG_MAPPING], ids=["NaN", "int past 64 bits"])
def test_a_schema_sent_as_another_type_is_a_422_and_stores_nothing(
    api: TestClient, tenant: str, content_type: str | None, raw: bytes
) -> None:
    # The body checks (NaN, 64-bit integers, lone surrogates) read JSON bodies; this route
    # parsed any body, so NaN was stored as null and 10^29 as sent.
    headers = {} if content_type is None else {"content-type": content_type}
    r = api.put(f"/v1/tenants/{tenant}/schema", content=raw, headers=headers)
    body = problem(r, 422)
    assert body["detail"] == f"body: {NOT_JSON}"
    assert body["errors"] == [{"reason": NOT_JSON, "field": "body", "location": "body"}]
    schema = api.get(f"/v1/tenants/{tenant}/schema").json()
    assert schema["version"] == 0
    assert schema["event_mappings"] == []


def test_a_schema_sent_as_json_is_still_checked_and_stored(api: TestClient, tenant: str) -> None:
    r = api.put(
        f"/v1/tenants/{tenant}/schema",
        content=NAN_MAPPING,
        headers={"content-type": "application/json; charset=utf-8"},
    )
    assert problem(r, 400)["detail"] == (
        "the request body is not portable JSON: NaN is not a JSON number"
    )
    r = api.put(
        f"/v1/tenants/{tenant}/schema",
        content=NAN_MAPPING.replace(b"NaN", b"1.5"),
        headers={"content-type": "application/json; charset=utf-8"},
    )
    assert r.status_code == 200, r.text
    assert r.json()["version"] == 1


# -- timestamps are RFC 3339 text, never Unix time ----------------------------------------
NOT_RFC3339 = "not an RFC 3339 timestamp with an offset, such as 2026-06-01T09:00:00Z"


@pytest.mark.parametrize("value", [99999999999999, 1700000000, 1.5e9, "1700000000", True])
def test_a_number_as_valid_from_is_a_422_and_writes_nothing(
    api: TestClient, tenant: str, value: Any
) -> None:
    # pydantic alone reads numbers (and digit strings) as Unix time, seconds or
    # milliseconds guessed by size: 99999999999999 was written as valid from year 5138.
    seed(api, tenant)
    facts = [fact("nora", "tier", value="gold"), fact("nora", "city", value="Rome")]
    facts[1]["valid_from"] = value
    r = api.post(f"/v1/tenants/{tenant}/facts", json={"facts": facts})
    body = problem(r, 422)
    assert body["detail"] == f"item 1 valid_from: {NOT_RFC3339}"
    assert body["errors"] == [
        {"reason": NOT_RFC3339, "index": 1, "field": "valid_from", "location": "body"}
    ]
    r = api.get(f"/v1/tenants/{tenant}/facts", params={"subject": "nora"})
    assert r.json() == {"facts": [], "next_cursor": None}


def test_a_number_as_occurred_at_is_a_422_and_stores_nothing(api: TestClient, tenant: str) -> None:
    ep: dict[str, Any] = {**episode("e9"), "occurred_at": 1700000000}
    body = problem(api.post(f"/v1/tenants/{tenant}/episodes", json=ep), 422)
    assert body["errors"] == [{"reason": NOT_RFC3339, "field": "occurred_at", "location": "body"}]
    problem(api.get(f"/v1/tenants/{tenant}/episodes/e9"), 404)


@pytest.mark.parametrize("field", ["as_of", "known_at"])
@pytest.mark.parametrize("value", ["1", "-1", "1700000000", "1700000000000"])
def test_digits_as_a_query_time_are_a_422(
    api: TestClient, tenant: str, field: str, value: str
) -> None:
    # GET /facts?known_at=1 answered what was known in 1970 (an empty page), silently.
    seed(api, tenant)
    r = api.get(f"/v1/tenants/{tenant}/facts", params={field: value})
    body = problem(r, 422)
    assert body["detail"] == f"{field}: {NOT_RFC3339}"
    assert body["errors"] == [{"reason": NOT_RFC3339, "field": field, "location": "query"}]


def test_a_number_as_retract_valid_to_is_a_422(api: TestClient, tenant: str) -> None:
    seed(api, tenant)
    fact_id = api.get(f"/v1/tenants/{tenant}/facts", params={"predicate": "tier"}).json()["facts"][
        0
    ]["fact_id"]
    r = api.post(f"/v1/tenants/{tenant}/facts/{fact_id}/retract", json={"valid_to": 1})
    assert problem(r, 422)["errors"] == [
        {"reason": NOT_RFC3339, "field": "valid_to", "location": "body"}
    ]
    r = api.get(f"/v1/tenants/{tenant}/facts", params={"predicate": "tier"})
    assert r.json()["facts"][0]["valid_to"] is None


# -- duplicate member names ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "name"),
    [
        # The empty batch first: a checker reading the first "facts" sees nothing to write.
        (b'{"facts": [], "facts": [%s]}', "facts"),
        (
            b'{"facts": [%s], "conflict_policy": "reject", "conflict_policy": "reject"}',
            "conflict_policy",
        ),
    ],
    ids=["top level", "same value twice"],
)
def test_a_member_named_twice_is_a_400_and_writes_nothing(
    api: TestClient, tenant: str, raw: bytes, name: str
) -> None:
    seed(api, tenant)
    item = json.dumps(fact("nora", "tier", value="gold")).encode()
    r = api.post(
        f"/v1/tenants/{tenant}/facts",
        content=raw % item,
        headers={"content-type": "application/json"},
    )
    assert problem(r, 400)["detail"] == (
        f"the request body is not portable JSON: the member {name!r} appears twice in one object"
    )
    r = api.get(f"/v1/tenants/{tenant}/facts", params={"subject": "nora"})
    assert r.json() == {"facts": [], "next_cursor": None}


def test_a_member_named_twice_inside_an_item_is_a_400(api: TestClient, tenant: str) -> None:
    seed(api, tenant)
    raw = (
        b'{"facts": [{"subject": "nora", "predicate": "tier", "value": "gold", "value": "lead",'
        b' "source_episode_id": "e1", "valid_from": "2026-06-01T09:00:00Z"}]}'
    )
    r = api.post(
        f"/v1/tenants/{tenant}/facts", content=raw, headers={"content-type": "application/json"}
    )
    assert problem(r, 400)["detail"] == (
        "the request body is not portable JSON: the member 'value' appears twice in one object"
    )
