"""The LLM extractor against a real HTTP server on loopback speaking chat-completions."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from extraction.json_schema import SCHEMA_NAME
from extraction.llm import LlmExtractor, parse_content, retry_after_seconds
from extraction.loopback import LoopbackLLM, Reply, answer, completion, status
from extraction.models import (
    ExtractionRequest,
    ModelOutputError,
    ModelRequestError,
    ModelUnavailableError,
)
from graph.model import Episode, EpisodeKind
from graph.schema import MemorySchema, PredicateSpec
from graph.timeutil import utcnow

T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)
SCHEMA = MemorySchema(
    predicates=[PredicateSpec(name="passport_deadline", value_type="date")]  # type: ignore[arg-type]
)
FACT = {
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


def request(content: str = "my passport deadline is 2026-07-15") -> ExtractionRequest:
    ep = Episode(
        tenant_id="t",
        episode_id="e1",
        kind=EpisodeKind.MESSAGE,
        content=content,
        content_hash="",
        occurred_at=T0,
        session_id="s1",
        recorded_at=T0,
    )
    return ExtractionRequest(episode=ep, schema=SCHEMA)


class Sleeps:
    """Records the pauses the extractor asks for instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def extractor(llm: LoopbackLLM, sleeps: Sleeps, **kw: object) -> LlmExtractor:
    return LlmExtractor(base_url=llm.base_url, model="loopback", api_key="k", sleep=sleeps, **kw)  # type: ignore[arg-type]


def test_good_answer_is_one_call_with_the_schema_and_the_episode(llm: LoopbackLLM) -> None:
    llm.script(answer([FACT]))
    sleeps = Sleeps()
    ex = extractor(llm, sleeps)
    proposal = ex.extract(request())
    ex.close()
    assert proposal.candidates == [FACT]
    assert (proposal.model_calls, proposal.http_attempts, llm.calls) == (1, 1, 1)
    assert sleeps.waits == []
    sent = llm.requests[0]
    assert sent["model"] == "loopback"
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["name"] == SCHEMA_NAME
    item = sent["response_format"]["json_schema"]["schema"]["properties"]["facts"]["items"]
    predicates = [v["properties"]["predicate"] for v in item["anyOf"]]
    assert {"type": "string", "enum": ["passport_deadline"]} in predicates
    user = json.loads(sent["messages"][1]["content"])
    assert user["episode"]["content"] == "my passport deadline is 2026-07-15"
    assert user["episode"]["occurred_at"] == "2026-06-01T09:00:00Z"
    assert "passport_deadline = date" in sent["messages"][0]["content"]


def test_text_that_is_not_json_is_a_model_output_error(llm: LoopbackLLM) -> None:
    llm.script(completion("Sure! Mira's passport deadline is 15 July."))
    ex = extractor(llm, Sleeps())
    with pytest.raises(ModelOutputError, match="not JSON") as info:
        ex.extract(request())
    ex.close()
    assert (info.value.retryable, info.value.model_calls, llm.calls) == (False, 1, 1)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ('[{"subject": "mira"}]', "wrong shape"),
        ('{"facts": {"subject": "mira"}}', "wrong shape"),
        ('{"facts": [], "notes": "x"}', "unexpected keys"),
        ('{"result": []}', "wrong shape"),
    ],
)
def test_json_of_the_wrong_shape_is_a_model_output_error(
    llm: LoopbackLLM, content: str, match: str
) -> None:
    llm.script(completion(content))
    ex = extractor(llm, Sleeps())
    with pytest.raises(ModelOutputError, match=match):
        ex.extract(request())
    ex.close()
    assert llm.calls == 1


def test_values_of_the_wrong_type_pass_the_boundary_and_are_judged_per_candidate(
    llm: LoopbackLLM,
) -> None:
    # The shape is right; each candidate is validated later, one by one (pipeline tests).
    wrong = {**FACT, "value": 20260715}
    llm.script(answer([wrong]))
    ex = extractor(llm, Sleeps())
    assert ex.extract(request()).candidates == [wrong]
    ex.close()


def test_timeout_is_not_retried_within_the_call(llm: LoopbackLLM) -> None:
    llm.script(Reply(delay=5.0, body=b"{}"))
    sleeps = Sleeps()
    ex = extractor(llm, sleeps, timeout=0.3)
    with pytest.raises(ModelUnavailableError, match=r"within 0.3 s") as info:
        ex.extract(request())
    ex.close()
    assert info.value.retryable is True
    assert (llm.calls, info.value.http_attempts, sleeps.waits) == (1, 1, [])


def test_429_waits_for_retry_after_then_succeeds(llm: LoopbackLLM) -> None:
    llm.script(status(429, retry_after="2"), answer([FACT]))
    sleeps = Sleeps()
    ex = extractor(llm, sleeps)
    proposal = ex.extract(request())
    ex.close()
    assert proposal.candidates == [FACT]
    assert (proposal.model_calls, proposal.http_attempts, llm.calls) == (1, 2, 2)
    assert sleeps.waits == [2.0]


def test_retry_after_beyond_the_limit_gives_up_and_hands_it_to_the_queue(
    llm: LoopbackLLM,
) -> None:
    llm.script(status(429, retry_after="120"))
    sleeps = Sleeps()
    ex = extractor(llm, sleeps, max_retry_wait=30.0)
    with pytest.raises(ModelUnavailableError, match="HTTP 429") as info:
        ex.extract(request())
    ex.close()
    assert (info.value.retry_after, llm.calls, sleeps.waits) == (120.0, 1, [])


def test_500_is_retried_a_bounded_number_of_times(llm: LoopbackLLM) -> None:
    llm.script(*[status(500)] * 5)
    sleeps = Sleeps()
    ex = extractor(llm, sleeps, max_retries=2)
    with pytest.raises(ModelUnavailableError, match=r"HTTP 500 .*after 3 attempts") as info:
        ex.extract(request())
    ex.close()
    assert (llm.calls, info.value.http_attempts) == (3, 3)
    assert sleeps.waits == [0.5, 1.0]  # exponential pauses without a Retry-After


def test_500_then_success(llm: LoopbackLLM) -> None:
    llm.script(status(503), answer([FACT]))
    sleeps = Sleeps()
    ex = extractor(llm, sleeps)
    assert ex.extract(request()).http_attempts == 2
    ex.close()
    assert llm.calls == 2


def test_401_is_not_retried(llm: LoopbackLLM) -> None:
    llm.script(status(401, text="bad key"))
    ex = extractor(llm, Sleeps())
    with pytest.raises(ModelRequestError, match="HTTP 401"):
        ex.extract(request())
    ex.close()
    assert llm.calls == 1


def test_unreachable_endpoint_is_retried_then_unavailable() -> None:
    with LoopbackLLM() as server:
        url = server.base_url  # a port that is closed once the server stops
    sleeps = Sleeps()
    ex = LlmExtractor(base_url=url, model="m", sleep=sleeps, max_retries=1)
    with pytest.raises(ModelUnavailableError, match="cannot reach"):
        ex.extract(request())
    ex.close()
    assert sleeps.waits == [0.5]


def test_api_key_is_sent_as_bearer(llm: LoopbackLLM) -> None:
    llm.script(answer([]))
    ex = LlmExtractor(base_url=llm.base_url + "/", model="m", api_key="sk-test")
    assert ex.extract(request()).candidates == []
    ex.close()
    assert llm.headers[0]["authorization"] == "Bearer sk-test"


def test_a_refusal_is_a_model_output_error(llm: LoopbackLLM) -> None:
    body = {"choices": [{"message": {"role": "assistant", "content": None, "refusal": "no"}}]}
    llm.script(Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"}))
    ex = extractor(llm, Sleeps())
    with pytest.raises(ModelOutputError, match="refused"):
        ex.extract(request())
    ex.close()


def test_code_fenced_json_is_accepted() -> None:
    assert parse_content('```json\n{"facts": []}\n```') == []


def test_retry_after_parses_seconds_and_http_dates() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("soon") is None
    later = retry_after_seconds(format_datetime(utcnow().replace(microsecond=0), usegmt=True))
    assert later is not None
    assert 0.0 <= later <= 1.0
