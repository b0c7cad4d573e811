"""Extraction: episodes in, candidate MemoryDeltas out (the model proposes, the ledger decides).

Import from here; the submodules are implementation detail and may move. Entry points
for the API and the CLI: :func:`on_episode_created`, :func:`retry_episode`,
:func:`build_extractor`, :func:`start_workers`, :func:`run_worker`, and the review
actions of :mod:`extraction.review`.
"""

from extraction.json_schema import answer_schema, response_format
from extraction.llm import LlmExtractor, build_extractor
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
from extraction.pipeline import (
    can_extract,
    choose_mode,
    needs_model,
    on_episode_created,
    retry_episode,
)
from extraction.review import (
    confirm_candidate,
    decide_merge_candidate,
    reject_candidate,
)
from extraction.settings import ExtractionSettings
from extraction.worker import Worker, WorkerPool, run_worker, start_workers

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
    "needs_model",
    "on_episode_created",
    "parse_mappings",
    "reject_candidate",
    "response_format",
    "retry_episode",
    "run_worker",
    "start_workers",
]
