"""The whole settings: one section per area, read from the YAML file and the environment."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

from pydantic import model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from graphrag.settings.api import ApiSettings
from graphrag.settings.auth import AuthSettings
from graphrag.settings.base import project_root
from graphrag.settings.chat import ChatSettings
from graphrag.settings.evaluation import EvaluationSettings
from graphrag.settings.extraction import ExtractionSettings, PreviewSettings
from graphrag.settings.faces import FacesSettings
from graphrag.settings.ingest import IngestSettings
from graphrag.settings.llm import SCHEMA_EMBEDDING_DIM, EmbeddingSettings, LlmSettings
from graphrag.settings.memory import MemorySettings
from graphrag.settings.ops import CliSettings, MetricsSettings
from graphrag.settings.resolution import ResolutionSettings
from graphrag.settings.search import GraphSearchSettings, SearchSettings
from graphrag.settings.sources import SectionEnvSource, yaml_source
from graphrag.settings.stores import DatabaseSettings, Neo4jSettings, RedisSettings
from graphrag.settings.tasks import CelerySettings, OutboxSettings

__all__ = ["Settings", "get_settings"]


class Settings(BaseSettings):
    """Every tunable of the backend. Build it once per process with `get_settings()`."""

    model_config = SettingsConfigDict(
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="ignore",
        frozen=True,
    )

    environment: Literal["development", "test", "production"]
    version: str
    log_level: str
    storage_dir: Path
    max_file_size_mb: int
    api: ApiSettings
    database: DatabaseSettings
    redis: RedisSettings
    neo4j: Neo4jSettings
    llm: LlmSettings
    embedding: EmbeddingSettings
    ingest: IngestSettings
    celery: CelerySettings
    outbox: OutboxSettings
    search: SearchSettings
    cli: CliSettings
    chat: ChatSettings
    extraction: ExtractionSettings
    graph_search: GraphSearchSettings
    memory: MemorySettings
    auth: AuthSettings
    previews: PreviewSettings
    metrics: MetricsSettings
    faces: FacesSettings
    evaluation: EvaluationSettings
    resolution: ResolutionSettings

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, SectionEnvSource(settings_cls), yaml_source(settings_cls))

    @model_validator(mode="after")
    def _secure_in_production(self) -> Settings:
        # Default passwords, an open API or an unkeyed hash are only fine on a dev machine.
        if self.environment == "production":
            if not self.auth.required:
                raise ValueError("auth.required must be true in production")
            if not self.auth.pepper.get_secret_value():
                raise ValueError("auth.pepper (AUTH_PEPPER) must be set in production")
            self._refuse_default_passwords()
        return self

    @model_validator(mode="after")
    def _body_cap_holds_an_upload(self) -> Settings:
        # The request guard runs before the upload route: it must let a largest file through.
        if self.api.max_body_bytes < self.max_file_size_bytes + self.api.multipart_slack_bytes:
            raise ValueError("api.max_body_mb must be at least max_file_size_mb plus the slack")
        return self

    @model_validator(mode="after")
    def _embedding_fits_the_schema(self) -> Settings:
        # The stored vectors' width is the schema's; a model of another width cannot write them.
        if self.embedding.dim != SCHEMA_EMBEDDING_DIM:
            raise ValueError(
                f"embedding.dim (EMBEDDING_DIM) is {self.embedding.dim} but the database stores "
                f"vectors of {SCHEMA_EMBEDDING_DIM} (chunks.embedding): another width needs a "
                "migration of that column and a re-embed of every chunk"
            )
        return self

    def _refuse_default_passwords(self) -> None:
        refused = set(self.auth.default_passwords)
        neo4j_password = self.neo4j.password.get_secret_value()
        if self.neo4j.enable and (not neo4j_password or neo4j_password in refused):
            raise ValueError(
                "neo4j.password (NEO4J_PASSWORD) is empty or a shipped default; "
                "production needs a password of its own"
            )
        database_password = _url_password(self.database.url)
        if database_password is not None and database_password in refused:
            raise ValueError(
                "the PostgreSQL password in database.url (DATABASE_URL) is a shipped default; "
                "production needs a password of its own"
            )

    def resolve(self, path: Path) -> Path:
        """An absolute path for a setting that may be relative to the project root."""
        return path if path.is_absolute() else project_root() / path

    @property
    def max_file_size_bytes(self) -> int:
        return self.max_file_size_mb * 1024 * 1024


def _url_password(url: str | None) -> str | None:
    """The password of a database URL (percent-decoded), or None when it holds none."""
    if not url:
        return None
    password = urlsplit(url).password
    return unquote(password) if password is not None else None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once at start (api lifespan, worker init, CLI)."""
    return Settings()  # fields come from the YAML and env sources
