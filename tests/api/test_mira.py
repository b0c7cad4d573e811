"""The seed's Mira scenario (examples/scenarios/mira.json) through the typed clients:
sync over real HTTP on loopback (uvicorn in a thread), async in-process."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from typing import Any

import httpx
import pytest

from api.app import create_app
from api.client import AsyncSgamClient, SgamClient, SgamPayloadTooLarge, SgamUnauthorized
from api.server import running
from api.settings import Settings
from graph.port import Store
from graph.timeutil import parse_instant
from tests.conftest import SCENARIOS

MIRA = SCENARIOS / "mira.json"


def _steps() -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = json.loads(MIRA.read_text(encoding="utf-8"))["steps"]
    return steps


def _t(text: str | None) -> datetime | None:
    return None if text is None else parse_instant(text, field="t")


def _check_expect(facts: list[Any], want: dict[str, Any]) -> None:
    matching = [f for f in facts if f.value == want["value"]]
    assert len(facts) == 1, facts
    assert len(matching) == 1, (facts, want)
    if "source_episode_id" in want:
        assert matching[0].source_episode_id == want["source_episode_id"]


def _check_history(facts: list[Any], want: dict[str, Any]) -> None:
    got = [(f.valid_from, f.valid_to, f.source_episode_id) for f in facts]
    expected = [(_t(a), _t(b), src) for a, b, src in want["intervals"]]
    assert got == expected


def run_sync(client: SgamClient, tenant: str) -> int:
    checks = 0
    for step in _steps():
        if "episode" in step:
            assert client.create_episode(tenant, step["episode"]).created
        elif "facts" in step:
            r = client.write_facts(tenant, step["facts"])
            assert r.outcomes == ["created"] * len(step["facts"])
        elif "expect" in step:
            e = step["expect"]
            page = client.facts(
                tenant, subject=e["subject"], predicate=e["predicate"], as_of=_t(e.get("as_of"))
            )
            _check_expect(page.facts, e)
            checks += 1
        elif "expect_history" in step:
            e = step["expect_history"]
            h = client.history(tenant, subject=e["subject"], predicate=e["predicate"])
            _check_history(h.facts, e)
            checks += 1
        else:
            raise AssertionError(f"step kind not handled by this test: {sorted(step)}")
    return checks


async def run_async(client: AsyncSgamClient, tenant: str) -> int:
    checks = 0
    for step in _steps():
        if "episode" in step:
            assert (await client.create_episode(tenant, step["episode"])).created
        elif "facts" in step:
            await client.write_facts(tenant, step["facts"])
        elif "expect" in step:
            e = step["expect"]
            page = await client.facts(
                tenant, subject=e["subject"], predicate=e["predicate"], as_of=_t(e.get("as_of"))
            )
            _check_expect(page.facts, e)
            checks += 1
        elif "expect_history" in step:
            e = step["expect_history"]
            h = await client.history(tenant, subject=e["subject"], predicate=e["predicate"])
            _check_history(h.facts, e)
            checks += 1
        else:
            raise AssertionError(f"step kind not handled by this test: {sorted(step)}")
    return checks


def test_mira_over_real_http(store: Store, tenant: str) -> None:
    settings = Settings(
        host="127.0.0.1",
        port=0,
        api_keys=f"{tenant}:k-mira",
        max_body_bytes=4096,
        log_level="warning",
    )
    with running(settings, store=store) as url:
        assert url.startswith("http://127.0.0.1:")
        with SgamClient(url, "k-mira", timeout=10) as client:
            assert client.healthz().status == "ok"
            assert client.readyz().status == "ready"
            assert run_sync(client, tenant) == 5
            # Now: the corrected deadline, from e2; the late 30 May fact did not displace it.
            [now] = client.facts(tenant, subject="mira", predicate="passport_deadline").facts
            assert (now.value, now.source_episode_id) == ("2026-06-30", "e2")
            ep = client.get_episode(tenant, "e2")
            assert [f.value for f in ep.facts] == ["2026-06-30"]
            ent = client.entity(tenant, "mira")
            assert ent.entity_type == "Person"
            assert [f.value for f in ent.facts] == ["2026-06-30"]
            metrics = client.metrics()
            assert 'sgam_facts_written_total{outcome="created"} 3.0' in metrics
            with pytest.raises(SgamPayloadTooLarge) as big:
                client.write_facts(
                    tenant, [{"subject": "mira", "predicate": "note", "value": "x" * 5000}]
                )
            assert big.value.problem.status == 413
        with SgamClient(url, "wrong-key") as intruder, pytest.raises(SgamUnauthorized):
            intruder.facts(tenant)
        raw = httpx.get(f"{url}/v1/tenants/{tenant}/facts")  # no key, plain HTTP
        assert raw.status_code == 401
        assert raw.headers["content-type"] == "application/problem+json"


def test_mira_async_client_in_process(store: Store, tenant: str) -> None:
    app = create_app(Settings(), store=store)

    async def scenario() -> int:
        transport = httpx.ASGITransport(app=app)
        async with AsyncSgamClient("http://sgam.test", transport=transport) as client:
            checks = await run_async(client, tenant)
            seen = [f.value async for f in client.iter_facts(tenant, subject="mira", page_size=1)]
            assert seen == ["2026-06-30"]
            return checks

    assert asyncio.run(scenario()) == 5
