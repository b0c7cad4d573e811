"""Records and errors of extraction, and the one :class:`Extractor` protocol.

    SgamError
    └── ExtractionError        one episode's extraction failed; the episode records why
        ├── ModelOutputError     answered, but not JSON or not {"facts": [...]}  (not retried)
        ├── ModelRequestError    the endpoint refused the request (4xx)          (not retried)
        ├── ModelUnavailableError  timeout, 429, 5xx after bounded retries       (retried later)
        └── NoExtractorError     no event mapping matches and no model           (not retried)

An extractor only *proposes*: its candidates are raw JSON values that the pipeline
validates one by one; the ledger decides what becomes a fact.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from graph.errors import SgamError
from graph.model import Entity, Episode, EpisodeStatus, Fact, ModelUsage
from graph.queue import MergeCandidate, PendingCandidate
from graph.schema import MemorySchema

# Keys a proposed fact may carry (API.md, "LLM extraction protocol"); the service adds
# the tenant and the source episode itself.
ANSWER_FIELDS = frozenset(
    {
        "subject",
        "subject_type",
        "predicate",
        "value",
        "object",
        "object_type",
        "valid_from",
        "valid_to",
        "confidence",
        "evidence",
    }
)

Stage = Literal["shape", "mapping", "validation", "write"]


class ExtractionError(SgamError):
    """Extraction of one episode failed as a whole; nothing was written."""

    retryable: bool = False

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        self.reason = reason
        self.retry_after = retry_after  # seconds the endpoint asked us to wait, if it did
        self.model_calls = 0  # completions received before it failed (for the report)
        self.http_attempts = 0
        self.usage: ModelUsage | None = None  # what the model answers that came cost
        super().__init__(reason)


class ModelOutputError(ExtractionError):
    """The model answered, but with text that is not JSON or not of the agreed shape."""


class ModelRequestError(ExtractionError):
    """The endpoint refused the request itself: a wrong URL, model name or API key."""


class ModelUnavailableError(ExtractionError):
    """The model endpoint did not answer usefully in time (timeout, 429, 5xx, network)."""

    retryable = True


class NoExtractorError(ExtractionError):
    """No event mapping matches and no model is configured."""


class RejectedCandidate(BaseModel):
    """A proposed fact that was not written, kept on the episode with the reason."""

    candidate: Any
    reason: str
    field: str | None = None
    stage: Stage


@dataclass(frozen=True)
class ExtractionRequest:
    """What an extractor sees: the episode, the tenant's schema, and what is known."""

    episode: Episode
    schema: MemorySchema
    known_entities: list[Entity] = field(default_factory=list)
    known_facts: list[Fact] = field(default_factory=list)


@dataclass
class Proposal:
    """An extractor's answer: raw candidates (validated later) and its own rejections."""

    extractor: str
    candidates: list[Any]
    rejected: list[RejectedCandidate] = field(default_factory=list)
    model_calls: int = 0  # completions that produced this answer (1 for the LLM, 0 otherwise)
    http_attempts: int = 0  # requests sent, retries included
    usage: ModelUsage | None = None  # tokens and latency of the model call, when one ran


class Extractor(Protocol):
    """Turns one episode into candidate facts."""

    name: str
    wants_context: bool  # whether :class:`ExtractionRequest` should carry known state

    def extract(self, request: ExtractionRequest) -> Proposal:
        """Propose candidates, or raise :class:`ExtractionError`."""

    def close(self) -> None:
        """Release connections (called once, when the app or worker stops)."""


class ExtractionReport(BaseModel):
    """What extracting one episode did."""

    tenant_id: str
    episode_id: str
    status: EpisodeStatus
    extractor: str | None = None  # "llm", "mapper", or None when nothing ran
    model_calls: int = 0
    http_attempts: int = 0
    attempts: int = 0
    facts: list[Fact] = Field(default_factory=list)
    rejected: list[RejectedCandidate] = Field(default_factory=list)
    pending: list[PendingCandidate] = Field(default_factory=list)
    merge_candidates: list[MergeCandidate] = Field(default_factory=list)
    error: str | None = None
    usage: ModelUsage | None = None  # the episode's model usage, this attempt included
    lease_lost: bool = False  # another worker took the episode over; this outcome was dropped
