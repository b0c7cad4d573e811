"""/metrics: Prometheus text, per-app registries, labels by route template only."""

from __future__ import annotations

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from tests.api.conftest import AppFactory
from tests.api.helpers import episode, fact


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_metrics_count_requests_writes_conflicts(make_app: AppFactory, tenant: str) -> None:
    base = f"/v1/tenants/{tenant}"
    with TestClient(make_app()) as client, TestClient(make_app()) as other:
        client.post(f"{base}/episodes", json=episode("e1"))
        client.post(
            f"{base}/facts", json={"facts": [fact("a", "p", value=1), fact("b", "p", value=2)]}
        )
        client.post(f"{base}/facts", json={"facts": [fact("a", "p", value=1)]})  # unchanged
        client.post(f"{base}/facts", json={"facts": [fact("a", "p", value=3)]})  # 409
        for _ in range(3):
            client.get(f"{base}/facts", params={"subject": "a"})
        client.get(f"{base}/episodes/missing")
        text = client.get("/metrics").text
        m = _samples(text)
        route = "/v1/tenants/{tenant}/facts"

        def requests(method: str, path: str, status: str) -> float:
            key = frozenset({("method", method), ("route", path), ("status", status)})
            return m[("sgam_http_requests_total", key)]

        assert requests("GET", route, "200") == 3
        assert requests("POST", route, "201") == 2
        assert requests("POST", route, "409") == 1
        assert requests("GET", "/v1/tenants/{tenant}/episodes/{episode_id}", "404") == 1
        hist = frozenset({("method", "GET"), ("route", route), ("status", "200")})
        assert m[("sgam_http_request_duration_seconds_count", hist)] == 3
        assert m[("sgam_http_request_duration_seconds_sum", hist)] > 0
        assert m[("sgam_facts_written_total", frozenset({("outcome", "created")}))] == 2
        assert m[("sgam_facts_written_total", frozenset({("outcome", "unchanged")}))] == 1
        assert m[("sgam_conflicts_total", frozenset({("kind", "FactConflictError")}))] == 1
        assert tenant not in text  # route templates only, never raw paths
        # Another app in the same process keeps its own registry.
        others = _samples(other.get("/metrics").text)
        assert not [k for k in others if k[0] == "sgam_facts_written_total"]


def test_requests_refused_before_routing_are_counted(make_app: AppFactory, tenant: str) -> None:
    with TestClient(make_app(api_keys=f"{tenant}:k", max_body_bytes=64)) as client:
        client.get(f"/v1/tenants/{tenant}/facts")  # 401 from the gate
        client.post(
            f"/v1/tenants/{tenant}/facts",
            headers={"Authorization": "Bearer k"},
            json={"facts": [fact("a", "p", value="x" * 100)]},
        )  # 413
        client.get("/no/such/route")
        m = _samples(client.get("/metrics").text)

    def n(method: str, route: str, status: str) -> float:
        key = frozenset({("method", method), ("route", route), ("status", status)})
        return m.get(("sgam_http_requests_total", key), 0.0)

    assert n("GET", "/v1/tenants/{tenant}/facts", "401") == 1
    assert n("POST", "/v1/tenants/{tenant}/facts", "413") == 1
    assert n("GET", "<unmatched>", "404") == 1
