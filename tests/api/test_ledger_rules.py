"""Ledger rules through REST, on both stores: corroboration, retraction and deletion
together, bounded restatements, and the form of the timestamps a write answers."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.api.helpers import episode, fact


def _base(tenant: str) -> str:
    return f"/v1/tenants/{tenant}"


def _at(client: TestClient, tenant: str, as_of: str, **params: str) -> list[dict[str, Any]]:
    r = client.get(f"{_base(tenant)}/facts", params={"as_of": as_of, **params})
    assert r.status_code == 200, r.text
    out: list[dict[str, Any]] = r.json()["facts"]
    return out


def _history(client: TestClient, tenant: str, subject: str, predicate: str) -> list[Any]:
    r = client.get(
        f"{_base(tenant)}/facts/history", params={"subject": subject, "predicate": predicate}
    )
    assert r.status_code == 200, r.text
    return [
        (f["fact_id"], f["value"], f["valid_from"], f["valid_to"], f["sources"])
        for f in r.json()["facts"]
    ]


def test_retraction_of_a_corroborated_fact_survives_deleting_a_source(
    client: TestClient, tenant: str
) -> None:
    """Review H1: e1 and e2 state mira.status=gold, the fact is retracted, e1 is deleted:
    the fact keeps its id, cites e2 only, and stays retracted."""
    base = _base(tenant)
    for e in ("e1", "e2"):
        assert client.post(f"{base}/episodes", json=episode(e)).status_code == 201
    gold = {"valid_from": "2026-01-01T00:00:00Z"}
    first = client.post(
        f"{base}/facts", json={"facts": [fact("mira", "status", value="gold", **gold)]}
    )
    assert first.json()["outcomes"] == ["created"]
    fid = first.json()["facts"][0]["fact_id"]
    second = client.post(
        f"{base}/facts",
        json={"facts": [fact("mira", "status", value="gold", source_episode_id="e2", **gold)]},
    )
    assert second.json()["outcomes"] == ["corroborated"]
    assert second.json()["facts"][0]["fact_id"] == fid
    r = client.post(f"{base}/facts/{fid}/retract", json={"valid_to": "2026-03-01T00:00:00Z"})
    assert r.status_code == 200, r.text

    deleted = client.delete(f"{base}/episodes/e1")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["facts_removed"] == 0  # e2 still asserts it

    assert _at(client, tenant, "2026-06-01T00:00:00Z", subject="mira") == []
    (now,) = _at(client, tenant, "2026-02-01T00:00:00Z", subject="mira")
    assert (now["fact_id"], now["value"], now["valid_to"], now["sources"]) == (
        fid,
        "gold",
        "2026-03-01T00:00:00Z",
        ["e2"],
    )
    assert _history(client, tenant, "mira", "status") == [
        (fid, "gold", "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z", ["e2"])
    ]
    # Deleting the other source too removes the fact altogether.
    assert client.delete(f"{base}/episodes/e2").json()["facts_removed"] == 1
    assert _history(client, tenant, "mira", "status") == []


def test_corroborated_fact_keeps_its_id_and_cuts_when_its_first_source_goes(
    client: TestClient, tenant: str
) -> None:
    """A later value cut the corroborated fact; deleting the first source keeps the cut
    and the id (only the sources change)."""
    base = _base(tenant)
    for e in ("e1", "e2", "e3"):
        client.post(f"{base}/episodes", json=episode(e))
    jan = "2026-01-01T00:00:00Z"
    w = client.post(
        f"{base}/facts", json={"facts": [fact("mira", "city", value="Lyon", valid_from=jan)]}
    )
    fid = w.json()["facts"][0]["fact_id"]
    client.post(
        f"{base}/facts",
        json={
            "facts": [fact("mira", "city", value="Lyon", valid_from=jan, source_episode_id="e2")]
        },
    )
    cut = client.post(
        f"{base}/facts",
        json={
            "facts": [
                fact(
                    "mira",
                    "city",
                    value="Nice",
                    valid_from="2026-04-01T00:00:00Z",
                    source_episode_id="e3",
                )
            ]
        },
    )
    nice = cut.json()["facts"][0]["fact_id"]
    assert client.delete(f"{base}/episodes/e1").status_code == 200
    assert _history(client, tenant, "mira", "city") == [
        (fid, "Lyon", jan, "2026-04-01T00:00:00Z", ["e2"]),
        (nice, "Nice", "2026-04-01T00:00:00Z", None, ["e3"]),
    ]


def test_bounded_restatement_is_a_bounded_write_not_corroboration(
    client: TestClient, tenant: str
) -> None:
    """Review M3: the same statement with a valid_to replaces exactly that portion; its
    end is kept, and what it overlapped resumes after it."""
    base = _base(tenant)
    for e in ("e1", "e2"):
        client.post(f"{base}/episodes", json=episode(e))
    jan, mar = "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z"
    first = client.post(
        f"{base}/facts", json={"facts": [fact("mira", "status", value="gold", valid_from=jan)]}
    )
    fid = first.json()["facts"][0]["fact_id"]
    again = client.post(
        f"{base}/facts",
        json={
            "facts": [
                fact(
                    "mira",
                    "status",
                    value="gold",
                    valid_from=jan,
                    valid_to=mar,
                    source_episode_id="e2",
                )
            ]
        },
    )
    assert again.status_code == 201, again.text
    assert again.json()["outcomes"] == ["created"]
    bounded = again.json()["facts"][0]
    assert (bounded["valid_from"], bounded["valid_to"], bounded["sources"]) == (jan, mar, ["e2"])
    assert bounded["supersedes"] == [fid]
    history = _history(client, tenant, "mira", "status")
    assert [h[1:] for h in history] == [
        ("gold", jan, mar, ["e2"]),
        ("gold", mar, None, ["e1"]),
    ]
    assert history[1][0] == fid  # the remainder keeps the original's id

    # The same bounded statement again is corroboration (same portion), then a no-op.
    same = client.post(
        f"{base}/facts",
        json={"facts": [fact("mira", "status", value="gold", valid_from=jan, valid_to=mar)]},
    )
    assert same.json()["outcomes"] == ["corroborated"]
    assert same.json()["facts"][0]["sources"] == ["e2", "e1"]
    twice = client.post(
        f"{base}/facts",
        json={"facts": [fact("mira", "status", value="gold", valid_from=jan, valid_to=mar)]},
    )
    assert twice.json()["outcomes"] == ["unchanged"]

    # Deleting e2 gives the whole span back to e1's open fact.
    assert client.delete(f"{base}/episodes/e2").status_code == 200
    assert [h[1:] for h in _history(client, tenant, "mira", "status")] == [
        ("gold", jan, mar, ["e1"]),
        ("gold", mar, None, ["e1"]),
    ]


def test_writes_answer_timestamps_in_the_form_reads_do(client: TestClient, tenant: str) -> None:
    """Review L6: an input offset (+23:59) is answered in UTC with Z, as reads answer it."""
    base = _base(tenant)
    ep = client.post(
        f"{base}/episodes", json=episode("e1", occurred_at="2026-06-01T09:00:00+23:59")
    )
    assert ep.status_code == 201, ep.text
    assert ep.json()["occurred_at"] == "2026-05-31T09:01:00Z"
    assert ep.json()["recorded_at"].endswith("Z")
    w = client.post(
        f"{base}/facts",
        json={
            "facts": [
                fact(
                    "mira",
                    "city",
                    value="Lyon",
                    valid_from="2026-06-01T09:00:00+23:59",
                    valid_to="2026-07-01T00:00:00.5-01:30",
                )
            ]
        },
    )
    assert w.status_code == 201, w.text
    written = w.json()["facts"][0]
    assert (written["valid_from"], written["valid_to"]) == (
        "2026-05-31T09:01:00Z",
        "2026-07-01T01:30:00.500000Z",
    )
    read = _at(client, tenant, "2026-06-15T00:00:00Z", subject="mira")[0]
    for name in ("valid_from", "valid_to", "recorded_at"):
        assert written[name] == read[name], name
    retracted = client.post(
        f"{base}/facts/{written['fact_id']}/retract",
        json={"valid_to": "2026-06-20T00:00:00+02:00"},
    )
    assert retracted.json()["valid_to"] == "2026-06-19T22:00:00Z"
    got = client.get(f"{base}/episodes/e1").json()
    assert got["occurred_at"] == ep.json()["occurred_at"]
    assert got["recorded_at"] == ep.json()["recorded_at"]
