"""Request bodies and small checks shared by the API tests."""

from __future__ import annotations

from typing import Any

import httpx

PROBLEM_JSON = "application/problem+json"


def episode(
    episode_id: str, occurred_at: str = "2026-06-01T09:00:00Z", **extra: Any
) -> dict[str, Any]:
    return {
        "episode_id": episode_id,
        "kind": "message",
        "content": f"content of {episode_id}",
        "occurred_at": occurred_at,
        **extra,
    }


def fact(
    subject: str,
    predicate: str,
    *,
    value: Any = None,
    object: str | None = None,
    valid_from: str = "2026-06-01T09:00:00Z",
    source_episode_id: str = "e1",
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "subject": subject,
        "predicate": predicate,
        "valid_from": valid_from,
        "source_episode_id": source_episode_id,
        **extra,
    }
    if value is not None:
        out["value"] = value
    if object is not None:
        out["object"] = object
    return out


def problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """Assert ``response`` is an RFC 9457 problem with ``status``; return its body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM_JSON)
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["type"].startswith("urn:sgam:problem:")
    assert isinstance(body["title"], str)
    assert body["title"]
    return body
