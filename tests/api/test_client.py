"""The typed clients: one public surface; every operation of the API, answered by the sync
and the async client over real HTTP on loopback and by the in-process LocalClient alike."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

import pytest

import api.client
from api.app import create_app
from api.client import (
    AsyncSgamClient,
    SgamAPIError,
    SgamBadRequest,
    SgamClient,
    SgamConflict,
    SgamNotFound,
    SyncClient,
)
from api.client import calls as builders
from api.client.operations import OPERATIONS
from api.local import HANDLERS, LocalClient
from api.schemas import EpisodeWritten, FactsPublic
from api.server import running
from api.settings import Settings
from extraction import LlmExtractor, on_episode_created
from extraction.loopback import LoopbackLLM, answer
from graph.model import (
    ConflictPolicy,
    Direction,
    EpisodeCreate,
    ExtractMode,
    MemoryDelta,
    WriteStatus,
)
from graph.port import Store
from graph.queue import CandidateStatus
from graph.schema import MemorySchema, PredicateSpec
from graph.service import MemoryService
from tests.conftest import ROOT
from tests.integration.test_extraction_pipeline import T0, fact, settings

MIRA = ROOT / "examples" / "scenarios" / "mira.json"


# -- the surface -----------------------------------------------------------------------
def test_all_is_the_public_surface() -> None:
    names = api.client.__all__
    assert len(set(names)) == len(names)
    assert [n for n in names if not hasattr(api.client, n)] == []
    public = {n for n, v in vars(api.client).items() if not n.startswith("_")}
    modules = {n for n in public if inspect.ismodule(getattr(api.client, n))}
    assert public - modules == set(names)


def _template(name: str) -> tuple[str, str]:
    """The operation's method and path, with each path argument named as in OpenAPI."""
    build = getattr(builders, name)
    args: dict[str, Any] = {}
    for p in inspect.signature(build).parameters.values():
        if p.default is not inspect.Parameter.empty:
            continue
        args[p.name] = {"episode": {}, "schema": {}, "facts": []}.get(p.name, f"{{{p.name}}}")
    call = build(**args)
    return call.method, unquote(call.path)


def test_every_route_is_an_operation_and_every_operation_runs_in_process(
    sqlite_store: Store,
) -> None:
    paths = create_app(Settings(), store=sqlite_store).openapi()["paths"]
    routes = {(m.upper(), p) for p, item in paths.items() for m in item}
    assert {_template(name) for name in OPERATIONS} == routes
    assert set(HANDLERS) == set(OPERATIONS)


# -- every operation, over HTTP and in-process -----------------------------------------
@pytest.fixture
def server(store: Store) -> Iterator[str]:
    with running(Settings(port=0, log_level="warning", workers=0), store=store) as url:
        yield url


@pytest.fixture(params=["http", "local"])
def sgam(request: pytest.FixtureRequest, store: Store) -> Iterator[SyncClient]:
    """The blocking client over HTTP on loopback, then the in-process one, on one store."""
    client: SyncClient
    if request.param == "http":
        client = SgamClient(request.getfixturevalue("server"))
    else:
        client = LocalClient(store, settings=Settings(workers=0))
    with client:
        yield client


def test_every_method(sgam: SyncClient, tenant: str) -> None:
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
    june = datetime(2026, 6, 15, tzinfo=UTC)
    assert sgam.facts(tenant, subject="mira", predicate="city", as_of=june).facts[0].value == "Lyon"

    stored = sgam.put_schema(tenant, MemorySchema(mode="permissive"))
    assert stored.version == 1
    assert sgam.get_schema(tenant).version == 1
    assert sgam.get_episode(tenant, "e1").facts
    # No model and no event mapping: nothing could extract e1 again (its 202 and 409 are
    # in test_extraction_api.py).
    with pytest.raises(SgamBadRequest, match="a retry needs an extractor"):
        sgam.retry_episode(tenant, "e1")
    assert sgam.get_episode(tenant, "e1").status.value == "stored"
    deleted = sgam.delete_episode(tenant, "e1")
    assert (deleted.episode_id, deleted.facts_removed) == ("e1", 2)
    assert sgam.facts(tenant, subject="mira").facts == []
    assert sgam.candidates(tenant).candidates == []
    assert sgam.merge_candidates(tenant).merge_candidates == []
    assert sgam.healthz().status == "ok"
    assert sgam.readyz().status == "ready"
    assert "sgam_facts_written" in sgam.metrics()


def test_errors_are_typed_and_carry_the_problem(sgam: SyncClient, tenant: str) -> None:
    with pytest.raises(SgamNotFound) as nf:
        sgam.get_episode(tenant, "nope")
    assert nf.value.status == 404
    assert (nf.value.problem.title, nf.value.problem.detail) == (
        "Not found",
        "episode 'nope' not found",
    )

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
    assert (item.index, item.field, item.location) == (0, "valid_from", "body")
    with pytest.raises(SgamBadRequest) as deep:
        sgam.neighbors(tenant, "a", depth=9)
    assert deep.value.status == 422
    with pytest.raises(SgamNotFound):
        sgam.facts("Not A Tenant")


def _problem(fn: Any) -> dict[str, Any]:
    with pytest.raises(SgamAPIError) as e:
        fn()
    return e.value.problem.model_dump(mode="json", exclude_none=True)


def test_in_process_problems_are_the_servers(server: str, store: Store, tenant: str) -> None:
    episode = {"episode_id": "e1", "content": "x", "occurred_at": "2026-06-01T09:00:00Z"}
    naive = {"subject": "a", "predicate": "p", "value": 3, "valid_from": "2026-06-01T00:00:00"}
    clash = {"subject": "a", "predicate": "p", "value": 2, "source_episode_id": "e1"}
    bad_schema = {"mode": "strict", "predicates": [{"name": "Bad Name", "value_type": "string"}]}
    with SgamClient(server) as http, LocalClient(store, settings=Settings(workers=0)) as local:
        http.create_episode(tenant, episode)
        http.write_facts(tenant, [{**clash, "value": 1}])
        for client_call in (
            lambda c: c.get_episode(tenant, "nope"),
            lambda c: c.create_episode(tenant, {**episode, "content": "other"}),
            lambda c: c.write_facts(tenant, [naive, {"subject": "b"}]),
            lambda c: c.write_facts(tenant, [clash]),
            lambda c: c.put_schema(tenant, bad_schema),
            lambda c: c.search(tenant, ""),
            lambda c: c.retract_fact(tenant, "f_nope"),
            lambda c: c.facts(tenant, limit=0, as_of=datetime(2026, 1, 1)),
            lambda c: c.neighbors(tenant, "a", depth=9),
            lambda c: c.candidates(tenant, limit=5000),
            lambda c: c.facts(tenant, cursor="not-a-cursor"),
            lambda c: c.entity("Not A Tenant", "a"),
        ):
            over_http = _problem(lambda: client_call(http))  # noqa: B023
            in_process = _problem(lambda: client_call(local))  # noqa: B023
            # Only an answer over HTTP has a request id (unique to it); the rest is equal.
            assert len(over_http.pop("request_id")) == 32
            assert in_process == over_http


def _extract(service: MemoryService, model: LlmExtractor, tenant: str, eid: str) -> None:
    ep, _ = service.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id=eid, content="...", occurred_at=T0)
    )
    on_episode_created(service, model, ep, ExtractMode.SYNC, settings=settings())


def test_review_operations(
    sgam: SyncClient, service: MemoryService, tenant: str, llm: LoopbackLLM, model: LlmExtractor
) -> None:
    confirm = PredicateSpec(name="home_address", value_type="string", requires_confirmation=True)  # type: ignore[arg-type]
    service.put_schema(tenant_id=tenant, schema=MemorySchema(predicates=[confirm]))
    service.add_episode(
        tenant_id=tenant, body=EpisodeCreate(episode_id="e0", content="x", occurred_at=T0)
    )
    sgam.write_facts(
        tenant,
        [
            {
                "subject": "Mira Patel",
                "subject_type": "Person",
                "predicate": "city",
                "value": "Lyon",
                "source_episode_id": "e0",
            }
        ],
    )
    llm.script(
        answer([fact(predicate="home_address", value="1 Rue Haute")]),
        answer([fact(subject="ana", predicate="home_address", value="2 Rue Basse")]),
        answer([fact(subject="Mira Patell", predicate="employer", value="Initech")]),
    )
    for eid in ("e1", "e2", "e3"):
        _extract(service, model, tenant, eid)

    held = sgam.candidates(tenant).candidates
    assert [(c.episode_id, c.delta.value) for c in held] == [
        ("e1", "1 Rue Haute"),
        ("e2", "2 Rue Basse"),
    ]
    assert sgam.candidate(tenant, held[0].candidate_id).status == CandidateStatus.PENDING
    assert [c.episode_id for c in sgam.candidates(tenant, episode_id="e2").candidates] == ["e2"]
    confirmed = sgam.confirm_candidate(tenant, held[0].candidate_id, note="checked")
    assert (confirmed.candidate.note, [f.value for f in confirmed.facts]) == (
        "checked",
        ["1 Rue Haute"],
    )
    rejected = sgam.reject_candidate(tenant, held[1].candidate_id)
    assert rejected.status == CandidateStatus.REJECTED
    assert sgam.candidates(tenant).candidates == []
    [gone] = sgam.candidates(tenant, status=CandidateStatus.REJECTED).candidates
    assert gone.candidate_id == held[1].candidate_id
    with pytest.raises(SgamNotFound):
        sgam.candidate(tenant, "pc_unknown")

    [mc] = sgam.merge_candidates(tenant).merge_candidates
    assert (mc.entity_id, mc.existing_entity_id) == ("Mira Patell", "Mira Patel")
    assert sgam.accept_merge_candidate(tenant, mc.candidate_id).status.value == "accepted"
    with pytest.raises(SgamConflict):
        sgam.dismiss_merge_candidate(tenant, mc.candidate_id)
    assert sgam.merge_candidates(tenant).merge_candidates == []


# -- the async client ------------------------------------------------------------------
def test_async_client_over_http(server: str, tenant: str) -> None:
    async def run() -> None:
        async with AsyncSgamClient(server) as sgam:
            episode = {"episode_id": "e1", "content": "x", "occurred_at": "2026-06-01T09:00:00Z"}
            assert (await sgam.create_episode(tenant, episode)).created is True
            source = {"source_episode_id": "e1"}
            written = await sgam.write_facts(
                tenant,
                [
                    {"subject": "mira", "predicate": "city", "value": "Lyon", **source},
                    {"subject": "mira", "predicate": "knows", "object": "ann", **source},
                    {"subject": "mira", "predicate": "age", "value": 41, **source},
                ],
            )
            assert written.outcomes == [WriteStatus.CREATED] * 3
            city = written.facts[0]
            got = [f.predicate async for f in sgam.iter_facts(tenant, subject="mira", page_size=2)]
            assert sorted(got) == ["age", "city", "knows"]
            page = await sgam.facts(tenant, subject="mira", predicate="age")
            assert [f.value for f in page.facts] == [41]
            hood = await sgam.neighbors(tenant, "ann", direction=Direction.IN)
            assert sorted(e.entity_id for e in hood.entities) == ["ann", "mira"]
            assert len((await sgam.entity(tenant, "mira")).facts) == 3
            end = datetime(2026, 7, 1, tzinfo=UTC)
            assert (await sgam.retract_fact(tenant, city.fact_id, valid_to=end)).valid_to == end
            hist = await sgam.history(tenant, subject="mira", predicate="city")
            assert [(f.value, f.valid_to) for f in hist.facts] == [("Lyon", end)]
            assert (await sgam.put_schema(tenant, MemorySchema())).version == 1
            assert (await sgam.get_schema(tenant)).version == 1
            with pytest.raises(SgamBadRequest, match="a retry needs an extractor"):
                await sgam.retry_episode(tenant, "e1")  # no model, no mapping
            assert len((await sgam.get_episode(tenant, "e1")).facts) == 3
            assert (await sgam.candidates(tenant)).candidates == []
            assert (await sgam.merge_candidates(tenant)).merge_candidates == []
            with pytest.raises(SgamNotFound):
                await sgam.candidate(tenant, "pc_unknown")
            assert (await sgam.delete_episode(tenant, "e1")).facts_removed == 3
            with pytest.raises(SgamNotFound):
                await sgam.get_episode(tenant, "e1")
            assert (await sgam.healthz()).status == "ok"
            assert (await sgam.readyz()).status == "ready"
            assert "sgam_http_requests_total" in await sgam.metrics()

    asyncio.run(run())


# -- retrieval: the same answers through all three -------------------------------------
def _seed_mira(client: SyncClient, tenant: str) -> None:
    for step in json.loads(MIRA.read_text(encoding="utf-8"))["steps"]:
        if "episode" in step:
            client.create_episode(tenant, step["episode"])
        elif "facts" in step:
            client.write_facts(tenant, step["facts"])


def test_search_and_context_answer_alike_sync_async_and_in_process(
    server: str, store: Store, tenant: str
) -> None:
    june_2 = datetime(2026, 6, 2, tzinfo=UTC)
    question = "When is Mira's passport deadline?"
    # The first search loads the model and indexes what is new: no deadline for that.
    with (
        SgamClient(server, timeout=None) as http,
        LocalClient(store, settings=Settings(workers=0)) as local,
    ):
        _seed_mira(local, tenant)
        known = datetime.now(UTC)  # the context names the time it was known at: fix it
        local_found = local.search(tenant, "Mira passport deadline", scopes=["facts"], limit=3)
        found = http.search(tenant, "Mira passport deadline", scopes=["facts"], limit=3)
        assert [(h.kind, getattr(h.item, "value", None)) for h in found.results] == [
            ("fact", "2026-06-30")
        ]
        assert local_found == found
        then = http.context(tenant, question, as_of=june_2, known_at=known)
        assert [(f.value, f.source_episode_id) for f in then.facts] == [("2026-07-15", "e1")]
        assert "2026-07-15" in then.text
        assert "2026-06-30" not in then.text
        filtered = http.search(tenant, "deadline", filters={"predicates": ["nothing_here"]})
        assert [h.kind for h in filtered.results if h.kind == "fact"] == []
        assert local.context(tenant, question, as_of=june_2, known_at=known) == then

    async def run() -> None:
        async with AsyncSgamClient(server, timeout=None) as sgam:
            assert (
                await sgam.search(tenant, "Mira passport deadline", scopes=["facts"], limit=3)
                == found
            )
            assert await sgam.context(tenant, question, as_of=june_2, known_at=known) == then

    asyncio.run(run())
