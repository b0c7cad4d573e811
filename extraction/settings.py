"""Extraction settings from the environment (prefix ``SGAM_``), built by the caller.

The LLM names follow API.md: ``SGAM_LLM_BASE_URL``, ``SGAM_LLM_MODEL``,
``SGAM_LLM_API_KEY``. Without a base URL and a model no LLM extractor exists; JSON events
with an event mapping in the tenant's schema are still extracted (by the mapper).
"""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class ExtractionSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SGAM_", extra="ignore")

    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    # One model call's budget; a timeout is not retried inside the call (it already
    # spent the budget) but the queue retries the episode later.
    llm_timeout_seconds: float = Field(default=60.0, gt=0)
    llm_max_retries: int = Field(default=2, ge=0, le=10)  # on 429, 5xx and network errors
    # A Retry-After longer than this ends the call; the queue schedules the retry instead.
    llm_max_retry_wait_seconds: float = Field(default=30.0, ge=0)
    llm_temperature: float = Field(default=0.0, ge=0, le=2)

    workers: int = Field(default=1, ge=0, le=64)  # worker threads inside `sgam serve`
    worker_lease_seconds: float = Field(default=60.0, gt=0)  # renewed while a worker is busy
    worker_poll_seconds: float = Field(default=0.5, gt=0)
    worker_max_attempts: int = Field(default=5, ge=1)
    worker_backoff_seconds: float = Field(default=2.0, ge=0)
    worker_backoff_max_seconds: float = Field(default=300.0, ge=0)

    merge_threshold: float = Field(default=0.88, gt=0, le=1)  # name similarity of duplicates
    # Entities read per page for resolution (every page is read) and shown to the model
    # (the newest page only).
    catalog_limit: int = Field(default=5000, ge=1)
    prompt_max_facts: int = Field(default=40, ge=0)  # known facts shown to the model

    @field_validator("llm_base_url", "llm_model", "llm_api_key", mode="before")
    @classmethod
    def _blank_is_unset(cls, v: object) -> object:
        # SGAM_LLM_BASE_URL= (an empty export, a blank line of an env file) means "not
        # set", as it does for every other SGAM_ variable read with ``or``.
        if isinstance(v, str) and not v.strip():
            return None
        return v

    @model_validator(mode="after")
    def _llm_complete(self) -> ExtractionSettings:
        if (self.llm_base_url is None) != (self.llm_model is None):
            raise ValueError("set both SGAM_LLM_BASE_URL and SGAM_LLM_MODEL, or neither")
        return self

    @property
    def llm_configured(self) -> bool:
        return self.llm_base_url is not None and self.llm_model is not None
