"""Settings of the API keys."""

from __future__ import annotations

from pydantic import Field, SecretStr

from graphrag.settings.base import Section as _Section

__all__ = ["AuthSettings"]


class AuthSettings(_Section):
    """API keys: whether they are required, and how they are made and hashed."""

    required: bool
    pepper: SecretStr = Field(description="HMAC key of stored key hashes; required in production")
    key_secret_bytes: int = Field(ge=16)
    key_prefix_bytes: int = Field(ge=2, le=16)
    max_key_chars: int = Field(gt=0)
    failed_max_per_window: int = Field(
        ge=0, description="failed key checks per client address and window; 429 beyond; 0: off"
    )
    failed_window_s: int = Field(gt=0)
    failed_ipv6_prefix: int = Field(
        ge=1, le=128, description="IPv6 clients' failed keys are counted per network of this prefix"
    )
    default_passwords: list[str] = Field(
        description="shipped or well-known passwords that production refuses for its services"
    )
