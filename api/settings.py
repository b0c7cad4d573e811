"""Server settings from the environment (prefix ``SGAM_``), built by the caller, never at import.

``SGAM_API_KEYS`` holds comma-separated ``tenant:key`` pairs; the tenant ``*`` marks an
admin key that reaches every tenant. With no keys the server runs open (and
:func:`api.server.serve` then refuses any non-loopback address).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from extraction.settings import ExtractionSettings
from graph.model import valid_tenant
from graph.stores import DEFAULT_STORE_URL

ADMIN_TENANT = "*"
MiB = 1024 * 1024


class ApiKey(BaseModel):
    """One configured key: the tenant it opens (``*``: every tenant) and its secret."""

    model_config = ConfigDict(frozen=True)

    tenant: str
    key: SecretStr

    @property
    def admin(self) -> bool:
        return self.tenant == ADMIN_TENANT


def parse_api_keys(text: str) -> list[ApiKey]:
    """``"acme:k1,beta:k2,*:root"`` → keys; a malformed pair is an error, never skipped."""
    keys: list[ApiKey] = []
    for raw in text.split(","):
        pair = raw.strip()
        if not pair:
            continue
        tenant, sep, key = pair.partition(":")
        tenant, key = tenant.strip(), key.strip()
        if not sep or not key:
            raise ValueError("each API key must be written tenant:key")
        if tenant != ADMIN_TENANT and not valid_tenant(tenant):
            raise ValueError(f"API key tenant {tenant!r} is not a valid tenant id (or '*')")
        keys.append(ApiKey(tenant=tenant, key=SecretStr(key)))
    return keys


class Settings(ExtractionSettings):
    """Server settings; the extraction ones (SGAM_LLM_*, SGAM_WORKERS...) are inherited."""

    model_config = SettingsConfigDict(env_prefix="SGAM_", extra="ignore")

    store_url: str = DEFAULT_STORE_URL
    api_keys: Annotated[list[ApiKey], NoDecode] = Field(default_factory=list)
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    max_body_bytes: int = Field(default=MiB, ge=1)
    log_level: Literal["critical", "error", "warning", "info", "debug", "trace"] = "info"
    # Seconds a client is told to wait (Retry-After) when the store cannot answer.
    retry_after_seconds: int = Field(default=5, ge=1)

    @field_validator("api_keys", mode="before")
    @classmethod
    def _parse_keys(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_api_keys(value)
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return parse_api_keys(",".join(value))
        return value

    @property
    def open(self) -> bool:
        """No keys configured: every request is admitted (loopback only)."""
        return not self.api_keys
