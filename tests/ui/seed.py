"""Data the browser tests look at, written over real HTTP the way a client would.

- The Mira scenario (examples/scenarios/mira.json) replayed with ``sgam replay --api``:
  three passport-deadline versions, a correction and a late-arriving older value.
- A small insurance graph in tenant ``acme``: customer → accounts → policy → advisor,
  a status that changed (superseded) and an account held until it was retracted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from api.cli import main as cli

ROOT = Path(__file__).resolve().parents[2]
MIRA = ROOT / "examples" / "scenarios" / "mira.json"
TENANT = "acme"  # the Mira scenario's tenant

GRAPH_EPISODE = {
    "episode_id": "onb-1",
    "kind": "document",
    "occurred_at": "2026-01-01T09:00:00Z",
    "content": "Onboarding: cust-7 opened acct-1 and acct-2; acct-1 is governed by policy "
    "pol-9, whose advisor is adv-3. Status gold.",
}
REVIEW_EPISODE = {
    "episode_id": "rev-2",
    "kind": "message",
    "occurred_at": "2026-03-01T10:00:00Z",
    "content": "Review: cust-7 closed acct-2 at the end of February; status silver from March.",
}


def _fact(
    subject: str, predicate: str, source: str, valid_from: str, **rest: Any
) -> dict[str, Any]:
    return {
        "subject": subject,
        "predicate": predicate,
        "valid_from": valid_from,
        "source_episode_id": source,
        **rest,
    }


def replay_mira(url: str, *, key: str | None = None) -> None:
    args = ["replay", str(MIRA), "--api", url]
    if key is not None:
        args += ["--key", key]
    assert cli(args) == 0, "the Mira scenario must replay cleanly"


def seed_graph(url: str, *, key: str | None = None) -> None:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    base = f"{url}/v1/tenants/{TENANT}"
    with httpx.Client(headers=headers, timeout=30) as http:
        for ep in (GRAPH_EPISODE, REVIEW_EPISODE):
            r = http.post(f"{base}/episodes", json=ep)
            assert r.status_code in (200, 201), r.text
        jan = "2026-01-01T00:00:00Z"
        feb = "2026-02-01T00:00:00Z"
        facts = [
            _fact(
                "cust-7",
                "holds_account",
                "onb-1",
                jan,
                subject_type="Customer",
                object="acct-1",
                object_type="Account",
            ),
            _fact("cust-7", "holds_account", "onb-1", jan, object="acct-2", object_type="Account"),
            _fact("acct-1", "governed_by", "onb-1", feb, object="pol-9", object_type="Policy"),
            _fact("pol-9", "advised_by", "onb-1", feb, object="adv-3", object_type="Advisor"),
            _fact("cust-7", "status", "onb-1", jan, value="gold"),
            _fact("cust-7", "status", "rev-2", "2026-03-01T00:00:00Z", value="silver"),
        ]
        r = http.post(f"{base}/facts", json={"facts": facts})
        assert r.status_code == 201, r.text
        acct2 = next(f for f in r.json()["facts"] if f.get("object") == "acct-2")
        r = http.post(
            f"{base}/facts/{acct2['fact_id']}/retract", json={"valid_to": "2026-03-01T00:00:00Z"}
        )
        assert r.status_code == 200, r.text


def history(url: str, subject: str, predicate: str, *, key: str | None = None) -> list[Any]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    r = httpx.get(
        f"{url}/v1/tenants/{TENANT}/facts/history",
        params={"subject": subject, "predicate": predicate},
        headers=headers,
        timeout=30,
    )
    assert r.status_code == 200, r.text
    facts: list[Any] = r.json()["facts"]
    return facts
