"""The LLM extractor over the OpenAI-compatible chat-completions API.

One completion per episode: ``POST {base_url}/chat/completions`` with the episode, the
schema and known state in the prompt and ``response_format: json_schema``. 429, 5xx and
network errors are retried at most ``max_retries`` times, after the server's
``Retry-After`` when it gives one (else an exponential pause); a timeout is not retried
here because it already spent the whole budget — the queue retries the episode later.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from extraction.json_schema import response_format
from extraction.models import (
    ExtractionError,
    ExtractionRequest,
    Extractor,
    ModelOutputError,
    ModelRequestError,
    ModelUnavailableError,
    Proposal,
)
from extraction.prompt import messages
from extraction.settings import ExtractionSettings
from graph.model import ModelUsage
from graph.timeutil import utcnow
from graph.tracing import set_attributes, span

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_EXCERPT = 200


def _excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - utcnow()).total_seconds())


def parse_content(content: str) -> list[Any]:
    """The model's message content → the raw candidate list, or :class:`ModelOutputError`."""
    text = content.strip()
    fenced = _FENCE.match(text)  # some local servers wrap JSON in a code fence anyway
    if fenced:
        text = fenced.group(1)
    try:
        answer = json.loads(text)
    except json.JSONDecodeError as e:
        raise ModelOutputError(f"model output is not JSON ({e.msg}): {_excerpt(content)!r}") from e
    if not isinstance(answer, dict) or not isinstance(answer.get("facts"), list):
        raise ModelOutputError(
            'model output has the wrong shape: expected {"facts": [...]}, got '
            f"{_excerpt(json.dumps(answer))}"
        )
    extra = sorted(set(answer) - {"facts"})
    if extra:
        raise ModelOutputError(f"model output has the wrong shape: unexpected keys {extra}")
    return list(answer["facts"])


class LlmExtractor:
    """Extracts candidates with one chat completion per episode."""

    name = "llm"
    wants_context = True

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        max_retry_wait: float = 30.0,
        temperature: float = 0.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.temperature = temperature
        self._sleep = sleep
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
        )
        self._lock = threading.Lock()
        self.requests_sent = 0  # every HTTP request, retries included (for metrics)

    def close(self) -> None:
        self._client.close()

    def body(self, request: ExtractionRequest) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": messages(request),
            "response_format": response_format(request.schema),
            "temperature": self.temperature,
        }

    def extract(self, request: ExtractionRequest) -> Proposal:
        sent = [0]
        tokens: list[tuple[int, int]] = []  # (prompt, completion) of each answer received
        start = time.perf_counter()
        attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": self.model}
        with span("llm.chat", **attrs):
            try:
                content = self._complete(self.body(request), sent, tokens)
                candidates = parse_content(content)
            except ExtractionError as e:
                e.http_attempts = sent[0]
                e.model_calls = 1 if isinstance(e, ModelOutputError) else 0
                e.usage = self._usage(tokens, start)
                raise
            finally:
                set_attributes(
                    **{
                        "gen_ai.usage.input_tokens": sum(t[0] for t in tokens),
                        "gen_ai.usage.output_tokens": sum(t[1] for t in tokens),
                        "sgam.http_attempts": sent[0],
                    }
                )
        return Proposal(
            extractor=self.name,
            candidates=candidates,
            model_calls=1,
            http_attempts=sent[0],
            usage=self._usage(tokens, start),
        )

    def _usage(self, tokens: list[tuple[int, int]], start: float) -> ModelUsage | None:
        """Usage of the answers received (None when the model never answered)."""
        if not tokens:
            return None
        return ModelUsage(
            model=self.model,  # as configured: a bounded label, unlike the answer's own name
            prompt_tokens=sum(t[0] for t in tokens),
            completion_tokens=sum(t[1] for t in tokens),
            calls=len(tokens),
            latency_seconds=time.perf_counter() - start,
        )

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        with self._lock:
            self.requests_sent += 1
        return self._client.post(self.url, json=body)

    def _complete(
        self, body: dict[str, Any], sent: list[int], tokens: list[tuple[int, int]]
    ) -> str:
        """Send the request, retrying as the module says; the message content.
        ``sent[0]`` counts the requests sent; ``tokens`` gets the usage of the answer."""
        attempt = 0
        while True:
            attempt += 1
            sent[0] = attempt
            last = attempt > self.max_retries
            try:
                resp = self._post(body)
            except httpx.TimeoutException as e:
                raise ModelUnavailableError(
                    f"the model did not answer within {self.timeout:g} s ({type(e).__name__})"
                ) from e
            except httpx.TransportError as e:
                if last:
                    raise ModelUnavailableError(
                        f"cannot reach the model endpoint after {attempt} attempts: {e}"
                    ) from e
                self._sleep(self._backoff(attempt))
                continue
            if resp.status_code == 200:
                return _content_of(resp, tokens)
            detail = f"HTTP {resp.status_code} from the model endpoint: {_excerpt(resp.text)!r}"
            if resp.status_code not in RETRY_STATUSES:
                # 400/401/404...: configuration or request errors; repeating cannot help.
                raise ModelRequestError(detail)
            wait = retry_after_seconds(resp.headers.get("Retry-After"))
            if last or (wait is not None and wait > self.max_retry_wait):
                raise ModelUnavailableError(
                    f"{detail} (after {attempt} attempts)", retry_after=wait
                )
            self._sleep(wait if wait is not None else self._backoff(attempt))

    def _backoff(self, attempt: int) -> float:
        return float(min(self.max_retry_wait, 0.5 * 2 ** (attempt - 1)))


def usage_tokens(data: Any) -> tuple[int, int]:
    """(prompt, completion) tokens of a chat-completions answer's ``usage``; 0 for what
    the server did not report (some local servers send no usage at all)."""
    usage = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(usage, dict):
        return 0, 0

    def count(name: str) -> int:
        v = usage.get(name)
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0

    return count("prompt_tokens"), count("completion_tokens")


def _content_of(resp: httpx.Response, tokens: list[tuple[int, int]]) -> str:
    """The first choice's message content of a chat-completions answer; its usage is
    appended to ``tokens`` first (an answer costs tokens even when its content is bad)."""
    try:
        data = resp.json()
    except ValueError as e:
        raise ModelOutputError(
            f"the model endpoint answered 200 with a body that is not JSON: {_excerpt(resp.text)!r}"
        ) from e
    tokens.append(usage_tokens(data))
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError) as e:
        raise ModelOutputError(
            f"not a chat-completions answer (no choices[0].message): {_excerpt(resp.text)!r}"
        ) from e
    if not isinstance(message, dict):
        raise ModelOutputError("not a chat-completions answer: choices[0].message is not an object")
    refusal = message.get("refusal")
    if refusal:
        raise ModelOutputError(f"the model refused: {_excerpt(str(refusal))!r}")
    content = message.get("content")
    if isinstance(content, dict):  # a few servers hand back the parsed object
        return json.dumps(content)
    if not isinstance(content, str):
        raise ModelOutputError("the model's message has no text content")
    return content


def build_extractor(settings: ExtractionSettings) -> Extractor | None:
    """The LLM extractor when SGAM_LLM_BASE_URL and SGAM_LLM_MODEL are set, else None
    (event mappings of a tenant's schema work without it)."""
    if settings.llm_base_url is None or settings.llm_model is None:
        return None
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return LlmExtractor(
        base_url=settings.llm_base_url,
        model=settings.llm_model,
        api_key=key,
        timeout=settings.llm_timeout_seconds,
        max_retries=settings.llm_max_retries,
        max_retry_wait=settings.llm_max_retry_wait_seconds,
        temperature=settings.llm_temperature,
    )
