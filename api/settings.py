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
    """``"acme:k1,beta:k2,*:root"`` → keys; a malformed pair is an error, never skipped.

    An error names the pair by its position (1-based) and, when it is a valid one, its
    tenant; never the key, nor text that may be a key (a pair without ':', a tenant that
    is not a tenant id: the two halves may have been swapped).
    """
    keys: list[ApiKey] = []
    for n, raw in enumerate(text.split(","), start=1):
        pair = raw.strip()
        if not pair:
            continue
        tenant, sep, key = pair.partition(":")
        tenant, key = tenant.strip(), key.strip()
        if not sep:
            raise ValueError(f"API key pair {n} has no ':' (write each pair as tenant:key)")
        if tenant != ADMIN_TENANT and not valid_tenant(tenant):
            raise ValueError(
                f"API key pair {n}: its tenant is not a valid tenant id (or '*'); "
                "write each pair as tenant:key"
            )
        if not key:
            raise ValueError(f"API key pair {n} (tenant {tenant!r}) has an empty key")
        keys.append(ApiKey(tenant=tenant, key=SecretStr(key)))
    return keys


class Settings(ExtractionSettings):
    """Server settings; the extraction ones (SGAM_LLM_*, SGAM_WORKERS...) are inherited."""

    # hide_input_in_errors: a settings error must not print the value it refused, which
    # for SGAM_API_KEYS is every key.
    model_config = SettingsConfigDict(env_prefix="SGAM_", extra="ignore", hide_input_in_errors=True)

    store_url: str = DEFAULT_STORE_URL
    api_keys: Annotated[list[ApiKey], NoDecode] = Field(default_factory=list)
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    max_body_bytes: int = Field(default=MiB, ge=1)
    log_level: Literal["critical", "error", "warning", "info", "debug", "trace"] = "info"
    # Seconds a client is told to wait (Retry-After) when the store cannot answer.
    retry_after_seconds: int = Field(default=5, ge=1)
    # Seconds between retention passes of the server's purger (graph.retention); 0: none
    # (then `sgam purge` from cron). It runs when the server runs workers (SGAM_WORKERS).
    purge_interval_seconds: int = Field(default=3600, ge=0, le=7 * 24 * 3600)

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
