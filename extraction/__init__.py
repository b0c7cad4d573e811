"""Extraction: episodes in, candidate MemoryDeltas out (the model proposes, the ledger decides).

Import from here; the submodules are implementation detail and may move. Entry points
for the API and the CLI: :func:`on_episode_created`, :func:`retry_episode`,
:func:`build_extractor`, :func:`start_workers`, :func:`run_worker`, and the review
actions of :mod:`extraction.review`.
"""

from extraction.json_schema import answer_schema, response_format
from extraction.llm import LlmExtractor
from extraction.mapper import EventMapper, EventMapping, parse_mappings
from extraction.models import (
    ExtractionError,
    ExtractionReport,
    ExtractionRequest,
    Extractor,
    ModelOutputError,
    ModelRequestError,
    ModelUnavailableError,
    NoExtractorError,
    Proposal,
    RejectedCandidate,
)
from extraction.pipeline import can_extract, choose_mode, on_episode_created, retry_episode
from extraction.review import (
    confirm_candidate,
    decide_merge_candidate,
    reject_candidate,
)
from extraction.settings import ExtractionSettings
from extraction.worker import Worker, WorkerPool, run_worker, start_workers


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


__all__ = [
    "EventMapper",
    "EventMapping",
    "ExtractionError",
    "ExtractionReport",
    "ExtractionRequest",
    "ExtractionSettings",
    "Extractor",
    "LlmExtractor",
    "ModelOutputError",
    "ModelRequestError",
    "ModelUnavailableError",
    "NoExtractorError",
    "Proposal",
    "RejectedCandidate",
    "Worker",
    "WorkerPool",
    "answer_schema",
    "build_extractor",
    "can_extract",
    "choose_mode",
    "confirm_candidate",
    "decide_merge_candidate",
    "on_episode_created",
    "parse_mappings",
    "reject_candidate",
    "response_format",
    "retry_episode",
    "run_worker",
    "start_workers",
]
