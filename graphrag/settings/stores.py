"""Settings of the stores: PostgreSQL, Redis and Neo4j."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator

from graphrag.settings.base import Section as _Section

__all__ = ["DatabaseSettings", "Neo4jSettings", "RedisSettings"]


class DatabaseSettings(_Section):
    url: str | None = Field(description="SQLAlchemy URL; empty means the embedded server")
    embedded_dir: Path
    pool_size: int
    pool_max_overflow: int
    connect_retries: int
    connect_retry_interval_s: float
    statement_timeout_ms: int
    plan_cache_mode: Literal["auto", "force_custom_plan", "force_generic_plan"]
    ping_after_idle_s: float = Field(ge=0.0)


class RedisSettings(_Section):
    url: str
    port: int
    dir: Path


class Neo4jSettings(_Section):
    enable: bool
    uri: str
    username: str
    password: SecretStr
    database: str
    connect_retries: int
    connect_retry_interval_s: float
    connection_timeout_s: float
    max_connection_pool_size: int
    max_connection_lifetime_s: int
    transaction_timeout_s: float
    notifications_min_severity: Literal["OFF", "WARNING", "INFORMATION"]
    index_await_s: float
    delete_batch_size: int
    home: Path
    heap: str
    jvm_options: str
    startup_timeout_s: float

    @field_validator("enable", mode="before")
    @classmethod
    def _only_true_enables(cls, value: Any) -> bool:
        # The seed's rule: the graph is on only when the variable says "true"; empty means off.
        if isinstance(value, bool):
            return value
        return str(value).strip().lower() == "true"
