"""``GET /entities/{id}/predicates``: every timeline an entity has had, valid now or not."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api.helpers import episode, fact, problem


def _predicates(client: TestClient, tenant: str, **params: object) -> dict[str, object]:
    r = client.get(f"/v1/tenants/{tenant}/entities/mira/predicates", params=params)
    assert r.status_code == 200, r.text
    body: dict[str, object] = r.json()
    return body


def test_lists_timelines_that_are_not_valid_now(client: TestClient, tenant: str) -> None:
    base = f"/v1/tenants/{tenant}"
    assert client.post(f"{base}/episodes", json=episode("e1")).status_code == 201
    r = client.post(
        f"{base}/facts",
        json={
            "facts": [
                fact("mira", "passport_deadline", value="2026-07-15"),
                fact("mira", "nickname", value="Mi"),  # retracted below
                # Not valid yet (starts far in the future), and a bounded one long over.
                fact("mira", "visa_status", value="granted", valid_from="2999-01-01T00:00:00Z"),
                fact(
                    "mira",
                    "address",
                    value="Old Road 1",
                    valid_from="2020-01-01T00:00:00Z",
                    valid_to="2021-01-01T00:00:00Z",
                ),
                fact("mira", "holds_account", object="acct-1", object_type="Account"),
            ]
        },
    )
    assert r.status_code == 201, r.text
    before_retraction = client.get(f"{base}/facts", params={"subject": "mira"}).json()
    nickname = next(f for f in before_retraction["facts"] if f["predicate"] == "nickname")
    r = client.post(
        f"{base}/facts/{nickname['fact_id']}/retract", json={"valid_to": "2026-06-02T00:00:00Z"}
    )
    assert r.status_code == 200, r.text

    now = client.get(f"{base}/entities/mira").json()
    assert sorted(f["predicate"] for f in now["facts"]) == ["holds_account", "passport_deadline"]
    body = _predicates(client, tenant)
    assert body == {
        "predicates": [
            "address",
            "holds_account",
            "nickname",
            "passport_deadline",
            "visa_status",
        ],
        "next_cursor": None,
    }
    # The account is the object of holds_account, the subject of nothing.
    r = client.get(f"{base}/entities/acct-1/predicates")
    assert r.json() == {"predicates": [], "next_cursor": None}


def test_known_at_and_paging(client: TestClient, tenant: str) -> None:
    base = f"/v1/tenants/{tenant}"
    assert client.post(f"{base}/episodes", json=episode("e1")).status_code == 201
    first = client.post(f"{base}/facts", json={"facts": [fact("mira", "b_first", value=1)]})
    assert first.status_code == 201, first.text
    recorded = first.json()["facts"][0]["recorded_at"]
    later = [fact("mira", p, value=2) for p in ("a_later", "c_later")]
    assert client.post(f"{base}/facts", json={"facts": later}).status_code == 201

    assert _predicates(client, tenant, known_at=recorded)["predicates"] == ["b_first"]
    page1 = _predicates(client, tenant, limit=2)
    assert page1 == {"predicates": ["a_later", "b_first"], "next_cursor": "b_first"}
    page2 = _predicates(client, tenant, limit=2, cursor="b_first")
    assert page2 == {"predicates": ["c_later"], "next_cursor": None}
    exact = _predicates(client, tenant, limit=3)
    assert exact == {"predicates": ["a_later", "b_first", "c_later"], "next_cursor": None}

    problem(client.get(f"{base}/entities/mira/predicates", params={"cursor": "Not A"}), 422)
    problem(client.get(f"{base}/entities/mira/predicates", params={"limit": 0}), 422)
    problem(client.get(f"{base}/entities/mira/predicates", params={"limit": 1001}), 422)
    problem(client.get(f"{base}/entities/nobody/predicates"), 404)
