"""The write path end to end on each store: episode → loopback model → ledger → episode state.

The model is a real HTTP server on 127.0.0.1 speaking chat-completions; every outcome is
asserted on the ledger (what facts exist) and on the episode (status, reason, rejected).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from extraction import LlmExtractor, on_episode_created, retry_episode
from extraction.loopback import LoopbackLLM, Reply, answer, completion, status
from extraction.settings import ExtractionSettings
from graph.model import Episode, EpisodeCreate, EpisodeStatus, ExtractMode, Fact
from graph.schema import MemorySchema, PredicateSpec
from graph.service import MemoryService

T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)
DEADLINE = PredicateSpec(name="passport_deadline", value_type="date")  # type: ignore[arg-type]


def fact(**kw: Any) -> dict[str, Any]:
    """A proposed fact as the model writes it (every key present, as strict mode asks)."""
    base: dict[str, Any] = {
        "subject": "mira",
        "subject_type": "Person",
        "predicate": "passport_deadline",
        "value": "2026-07-15",
        "object": None,
        "object_type": None,
        "valid_from": None,
        "valid_to": None,
        "confidence": 0.9,
        "evidence": "passport deadline is 2026-07-15",
    }
    return {**base, **kw}


def settings(**kw: Any) -> ExtractionSettings:
    base: dict[str, Any] = {
        "llm_base_url": None,
        "llm_model": None,
        "worker_lease_seconds": 30.0,
        "worker_poll_seconds": 0.05,
        "worker_backoff_seconds": 0.0,
        "worker_max_attempts": 3,
    }
    return ExtractionSettings(**{**base, **kw})


@pytest.fixture
def extractor(llm: LoopbackLLM) -> Iterator[LlmExtractor]:
    ex = LlmExtractor(base_url=llm.base_url, model="loopback", timeout=2.0, sleep=lambda s: None)
    yield ex
    ex.close()


def post(
    service: MemoryService,
    tenant: str,
    content: str = "my passport deadline is 2026-07-15",
    *,
    episode_id: str | None = None,
    at: datetime = T0,
    session_id: str | None = "s1",
) -> Episode:
    ep, created = service.add_episode(
        tenant_id=tenant,
        body=EpisodeCreate(
            episode_id=episode_id, content=content, occurred_at=at, session_id=session_id
        ),
    )
    assert created
    return ep


def all_facts(service: MemoryService, tenant: str) -> list[Fact]:
    return service.facts(tenant_id=tenant, as_of=None)


def test_done_when_sync_episode_yields_the_fact_after_one_model_call(
    service: MemoryService, tenant: str, llm: LoopbackLLM, extractor: LlmExtractor
) -> None:
    llm.script(answer([fact()]))
    ep = post(service, tenant)
    report = on_episode_created(service, extractor, ep, ExtractMode.SYNC, settings=settings())
    assert llm.calls == 1
    assert (report.status, report.model_calls, report.extractor) == ("extracted", 1, "llm")
    assert [(f.subject, f.predicate, f.value) for f in report.facts] == [
        ("mira", "passport_deadline", "2026-07-15")
    ]
    written = report.facts[0]
    assert written.source_episode_id == ep.episode_id
    assert written.valid_from == ep.occurred_at == T0
    stored = service.get_episode(tenant_id=tenant, episode_id=ep.episode_id)
    assert (stored.status, stored.attempts, stored.last_error, stored.rejected) == (
        EpisodeStatus.EXTRACTED,
        1,
        None,
        [],
    )
    now = service.facts(tenant_id=tenant, subject="mira", predicate="passport_deadline")
    assert [(f.value, f.source_episode_id) for f in now] == [("2026-07-15", ep.episode_id)]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (completion("Mira's passport deadline is the 15th of July."), "not JSON"),
        (completion('{"fact": {"subject": "mira"}}'), "wrong shape"),
        (completion('[{"subject": "mira"}]'), "wrong shape"),
    ],
    ids=["not-json", "wrong-key", "array"],
)
def test_malformed_output_writes_nothing_and_fails_the_episode_with_the_reason(
    service: MemoryService,
    tenant: str,
    llm: LoopbackLLM,
    extractor: LlmExtractor,
    reply: Reply,
    reason: str,
) -> None:
    llm.script(reply)
    ep = post(service, tenant)
    report = on_episode_created(service, extractor, ep, ExtractMode.SYNC, settings=settings())
    assert (report.status, report.facts, report.model_calls, llm.calls) == ("failed", [], 1, 1)
    assert report.error is not None
    assert reason in report.error
    assert all_facts(service, tenant) == []
    stored = service.get_episode(tenant_id=tenant, episode_id=ep.episode_id)
    assert stored.status == EpisodeStatus.FAILED
    assert stored.last_error == report.error


def test_values_of_the_wrong_type_are_rejected_with_reasons_and_the_rest_written(
    service: MemoryService, tenant: str, llm: LoopbackLLM, extractor: LlmExtractor
) -> None:
    service.put_schema(tenant_id=tenant, schema=MemorySchema(predicates=[DEADLINE]))
    llm.script(
        answer(
            [
                fact(value=20260715),
                fact(value="next July"),
                fact(value=["2026-07-15"]),
                fact(subject="ana", value="2026-09-01"),
            ]
        )
    )
    ep = post(service, tenant)
    report = on_episode_created(service, extractor, ep, ExtractMode.SYNC, settings=settings())
    assert report.status == "extracted"
    assert [(f.subject, f.value) for f in all_facts(service, tenant)] == [("ana", "2026-09-01")]
    stored = service.get_episode(tenant_id=tenant, episode_id=ep.episode_id)
    reasons = [(r["candidate"]["value"], r["stage"], r["field"]) for r in stored.rejected]
    assert reasons == [
        (20260715, "validation", "value"),
        ("next July", "validation", "value"),
        (["2026-07-15"], "validation", "value"),
    ]
    assert "expected a date YYYY-MM-DD, got 20260715" in stored.rejected[0]["reason"]
    assert "expected a date YYYY-MM-DD, got 'next July'" in stored.rejected[1]["reason"]


def test_only_bad_candidates_leave_the_ledger_unchanged(
    service: MemoryService, tenant: str, llm: LoopbackLLM, extractor: LlmExtractor
) -> None:
    service.put_schema(tenant_id=tenant, schema=MemorySchema(predicates=[DEADLINE]))
    llm.script(answer([fact(value=True), "mira", fact(predicate="Passport Deadline")]))
    ep = post(service, tenant)
    report = on_episode_created(service, extractor, ep, ExtractMode.SYNC, settings=settings())
    assert (report.facts, all_facts(service, tenant)) == ([], [])
    assert [r.stage for r in report.rejected] == ["validation", "shape", "validation"]
    stored = service.get_episode(tenant_id=tenant, episode_id=ep.episode_id)
    assert len(stored.rejected) == 3


def test_timeout_fails_the_sync_episode_and_queues_the_background_one_for_later(
    service: MemoryService, tenant: str, llm: LoopbackLLM
) -> None:
    ex = LlmExtractor(base_url=llm.base_url, model="m", timeout=0.3)
    llm.script(Reply(delay=5.0, body=b"{}"))
    ep = post(service, tenant)
    report = on_episode_created(service, ex, ep, ExtractMode.SYNC, settings=settings())
    assert report.status == "failed"
    assert report.error is not None
    assert "did not answer within 0.3 s" in report.error
    assert all_facts(service, tenant) == []

    from extraction.worker import Worker

    llm.script(Reply(delay=5.0, body=b"{}"))
    ep2 = post(service, tenant, episode_id="e2")
    assert on_episode_created(service, ex, ep2, ExtractMode.BACKGROUND).status == "pending"
    worker = Worker(service, ex, settings(worker_backoff_seconds=60.0), tenant_id=tenant)
    done = worker.run_once()
    ex.close()
    assert done is not None
    assert done.status == "pending"
    stored = service.get_episode(tenant_id=tenant, episode_id="e2")
    assert (stored.status, stored.attempts) == (EpisodeStatus.PENDING, 1)
    assert stored.last_error is not None
    assert "attempt 1 of 3" in stored.last_error
    assert worker.run_once() is None  # not due before its backoff


def test_429_with_retry_after_is_waited_out_and_counted(
    service: MemoryService, tenant: str, llm: LoopbackLLM
) -> None:
    waits: list[float] = []
    ex = LlmExtractor(base_url=llm.base_url, model="m", sleep=waits.append)
    llm.script(status(429, retry_after="1"), answer([fact()]))
    ep = post(service, tenant)
    report = on_episode_created(service, ex, ep, ExtractMode.SYNC, settings=settings())
    ex.close()
    assert (report.status, report.model_calls, report.http_attempts, waits) == (
        "extracted",
        1,
        2,
        [1.0],
    )
    assert [f.value for f in all_facts(service, tenant)] == ["2026-07-15"]


def test_500s_are_retried_boundedly_then_the_episode_fails_visibly(
    service: MemoryService, tenant: str, llm: LoopbackLLM, extractor: LlmExtractor
) -> None:
    llm.script(*[status(500)] * 3)
    ep = post(service, tenant)
    report = on_episode_created(service, extractor, ep, ExtractMode.SYNC, settings=settings())
    assert (report.status, report.http_attempts, llm.calls) == ("failed", 3, 3)
    assert report.error is not None
    assert "HTTP 500" in report.error
    assert all_facts(service, tenant) == []
    # Retrying through the queue, once the model is back, writes the fact.
    llm.script(answer([fact()]))
    queued = retry_episode(service, tenant_id=tenant, episode_id=ep.episode_id)
    assert (queued.status, queued.attempts, queued.last_error) == ("pending", 0, None)
    from extraction.worker import Worker

    done = Worker(service, extractor, settings(), tenant_id=tenant).run_once()
    assert done is not None
    assert done.status == "extracted"
    assert [f.source_episode_id for f in all_facts(service, tenant)] == [ep.episode_id]
    assert llm.calls == 4


def test_known_state_is_in_the_prompt(
    service: MemoryService, tenant: str, llm: LoopbackLLM, extractor: LlmExtractor
) -> None:
    llm.script(answer([fact()]), answer([]))
    first = post(service, tenant, "Mira: my passport deadline is 2026-07-15", episode_id="e1")
    on_episode_created(service, extractor, first, ExtractMode.SYNC, settings=settings())
    later = post(service, tenant, "and my visa?", episode_id="e2", at=T0 + timedelta(days=1))
    on_episode_created(service, extractor, later, ExtractMode.SYNC, settings=settings())
    import json

    user = json.loads(llm.requests[1]["messages"][1]["content"])
    assert [e["id"] for e in user["known_entities"]] == ["mira"]  # via the session
    assert user["known_facts"] == [
        {
            "subject": "mira",
            "predicate": "passport_deadline",
            "value": "2026-07-15",
            "valid_from": "2026-06-01T09:00:00Z",
        }
    ]


def test_redelivered_answer_for_the_same_episode_writes_nothing_new(
    service: MemoryService, tenant: str, llm: LoopbackLLM, extractor: LlmExtractor
) -> None:
    llm.script(answer([fact()]), answer([fact()]))
    ep = post(service, tenant)
    on_episode_created(service, extractor, ep, ExtractMode.SYNC, settings=settings())
    retry_episode(service, tenant_id=tenant, episode_id=ep.episode_id)
    from extraction.worker import Worker

    again = Worker(service, extractor, settings(), tenant_id=tenant).run_once()
    assert again is not None
    assert again.status == "extracted"
    history = service.history(tenant_id=tenant, subject="mira", predicate="passport_deadline")
    assert len(history) == 1


def test_none_mode_stores_only_and_background_queues(
    service: MemoryService, tenant: str, extractor: LlmExtractor, llm: LoopbackLLM
) -> None:
    ep = post(service, tenant)
    assert on_episode_created(service, extractor, ep, ExtractMode.NONE).status == "stored"
    ep2 = post(service, tenant, episode_id="e2")
    assert on_episode_created(service, extractor, ep2, ExtractMode.BACKGROUND).status == "pending"
    assert llm.calls == 0
    counts = service.store.queue.queue_counts(tenant_id=tenant)
    assert counts == {"stored": 1, "pending": 1}


def test_no_extractor_for_a_plain_message_fails_with_the_reason(
    service: MemoryService, tenant: str
) -> None:
    ep = post(service, tenant)
    report = on_episode_created(service, None, ep, ExtractMode.SYNC, settings=settings())
    assert report.status == "failed"
    assert report.error is not None
    assert "no event mapping" in report.error


def test_two_values_for_one_single_valued_timeline_keep_the_first_and_reject_the_second(
    service: MemoryService, tenant: str, llm: LoopbackLLM, extractor: LlmExtractor
) -> None:
    llm.script(answer([fact(value="2026-07-15"), fact(value="2026-08-01")]))
    ep = post(service, tenant)
    report = on_episode_created(service, extractor, ep, ExtractMode.SYNC, settings=settings())
    assert [f.value for f in report.facts] == ["2026-07-15"]
    [refused] = report.rejected
    assert (refused.stage, refused.field, refused.candidate["value"]) == (
        "write",
        "valid_from",
        "2026-08-01",
    )
    assert "starts at the same instant" in refused.reason
    stored = service.get_episode(tenant_id=tenant, episode_id=ep.episode_id)
    assert [r["candidate"]["value"] for r in stored.rejected] == ["2026-08-01"]
