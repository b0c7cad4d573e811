"""The typed client: its public surface, every method against a real server, typed errors."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

import api.client
from api.client import (
    SgamBadRequest,
    SgamClient,
    SgamConflict,
    SgamNotFound,
)
from api.schemas import EpisodeWritten, FactsPublic
from api.server import running
from api.settings import Settings
from graph.model import ConflictPolicy, Direction, EpisodeCreate, MemoryDelta, WriteStatus
from graph.port import Store
from graph.schema import MemorySchema


def test_all_is_the_public_surface() -> None:
    assert sorted(api.client.__all__) == api.client.__all__
    missing = [n for n in api.client.__all__ if not hasattr(api.client, n)]
    assert missing == []
    public_classes = {
        n
        for n, v in vars(api.client).items()
        if isinstance(v, type)
        and v.__module__ == "api.client"
        and not n.startswith("_")
        and n != "Call"
    }
    assert public_classes <= set(api.client.__all__)


@pytest.fixture
def sgam(store: Store, tenant: str) -> Iterator[SgamClient]:
    settings = Settings(port=0, log_level="warning")
    with running(settings, store=store) as url, SgamClient(url) as client:
        yield client


def test_every_method(sgam: SgamClient, tenant: str) -> None:
    t0 = datetime(2026, 6, 1, 9, tzinfo=UTC)
    written = sgam.create_episode(
        tenant, EpisodeCreate(episode_id="e1", content="Mira moved.", occurred_at=t0)
    )
    assert isinstance(written, EpisodeWritten)
    assert (written.episode_id, written.created, written.status.value) == ("e1", True, "stored")
    assert (
        sgam.create_episode(
            tenant, EpisodeCreate(episode_id="e1", content="Mira moved.", occurred_at=t0)
        ).created
        is False
    )

    res = sgam.write_facts(
        tenant,
        [
            MemoryDelta(subject="mira", predicate="city", value="Lyon", source_episode_id="e1"),
            MemoryDelta(subject="mira", predicate="knows", object="ann", source_episode_id="e1"),
        ],
    )
    assert res.outcomes == [WriteStatus.CREATED, WriteStatus.CREATED]
    city, knows = res.facts
    assert city.valid_from == t0  # defaults to the episode's occurred_at

    page = sgam.facts(tenant, subject="mira", limit=1)
    assert isinstance(page, FactsPublic)
    assert len(page.facts) == 1
    assert page.next_cursor is not None
    assert sorted(f.predicate for f in sgam.iter_facts(tenant, subject="mira", page_size=1)) == [
        "city",
        "knows",
    ]

    hood = sgam.neighbors(tenant, "mira", depth=2, direction=Direction.OUT, predicates=["knows"])
    assert sorted(e.entity_id for e in hood.entities) == ["ann", "mira"]
    assert sgam.entity(tenant, "ann").facts[0].fact_id == knows.fact_id

    retracted = sgam.retract_fact(tenant, city.fact_id, valid_to=datetime(2026, 7, 1, tzinfo=UTC))
    assert retracted.valid_to == datetime(2026, 7, 1, tzinfo=UTC)
    hist = sgam.history(tenant, subject="mira", predicate="city")
    assert [(f.value, f.valid_to) for f in hist.facts] == [
        ("Lyon", datetime(2026, 7, 1, tzinfo=UTC))
    ]
    assert (
        sgam.facts(
            tenant, subject="mira", predicate="city", as_of=datetime(2026, 6, 15, tzinfo=UTC)
        )
        .facts[0]
        .value
        == "Lyon"
    )

    stored = sgam.put_schema(tenant, MemorySchema(mode="permissive"))
    assert stored.version == 1
    assert sgam.get_schema(tenant).version == 1
    assert sgam.get_episode(tenant, "e1").facts
    deleted = sgam.delete_episode(tenant, "e1")
    assert (deleted.episode_id, deleted.facts_removed) == ("e1", 2)
    assert sgam.facts(tenant, subject="mira").facts == []
    assert sgam.healthz().status == "ok"
    assert sgam.readyz().status == "ready"
    assert "sgam_http_requests_total" in sgam.metrics()


def test_errors_are_typed_and_carry_the_problem(sgam: SgamClient, tenant: str) -> None:
    with pytest.raises(SgamNotFound) as nf:
        sgam.get_episode(tenant, "nope")
    assert nf.value.status == 404
    assert nf.value.problem.title == "Not found"

    sgam.create_episode(
        tenant, {"episode_id": "e1", "content": "x", "occurred_at": "2026-06-01T09:00:00Z"}
    )
    first = sgam.write_facts(
        tenant, [{"subject": "a", "predicate": "p", "value": 1, "source_episode_id": "e1"}]
    )
    with pytest.raises(SgamConflict) as conflict:
        sgam.write_facts(
            tenant, [{"subject": "a", "predicate": "p", "value": 2, "source_episode_id": "e1"}]
        )
    assert conflict.value.problem.conflicting_fact_id == first.facts[0].fact_id
    assert conflict.value.problem.conflicting_source_episode_id == "e1"
    ok = sgam.write_facts(
        tenant,
        [{"subject": "a", "predicate": "p", "value": 2, "source_episode_id": "e1"}],
        conflict_policy=ConflictPolicy.LATEST_RECORDED_WINS,
    )
    assert ok.facts[0].value == 2

    with pytest.raises(SgamBadRequest) as bad:
        sgam.write_facts(
            tenant,
            [{"subject": "a", "predicate": "p", "value": 3, "valid_from": "2026-06-01T00:00:00"}],
        )
    [item] = bad.value.problem.errors or []
    assert (item.index, item.field) == (0, "valid_from")
    with pytest.raises(SgamBadRequest) as deep:
        sgam.neighbors(tenant, "a", depth=9)
    assert deep.value.status == 422
