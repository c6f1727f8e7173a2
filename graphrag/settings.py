"""Typed settings: `config/settings.yaml` supplies every default, environment variables override.

Environment names are the section and the field joined by one underscore, split once:
`NEO4J_URI` sets `neo4j.uri`, `LLM_BASE_URL` sets `llm.base_url`, `DATABASE_URL` sets
`database.url`. Top-level fields such as `MAX_FILE_SIZE_MB` and `STORAGE_DIR` keep their names.
"""

from __future__ import annotations

import ipaddress
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from graphrag.settings_base import Section as _Section
from graphrag.settings_memory import MemoryImportance, MemorySettings

__all__ = [
    "ApiSettings",
    "AuthSettings",
    "CelerySettings",
    "ChatSettings",
    "CliSettings",
    "DatabaseSettings",
    "EmbeddingSettings",
    "ExtractionSettings",
    "FacesSettings",
    "GraphSearchSettings",
    "IngestSettings",
    "LlmSettings",
    "MemoryImportance",
    "MemorySettings",
    "MetricsSettings",
    "Neo4jSettings",
    "NetworkPort",
    "OutboxSettings",
    "PreviewSettings",
    "RedisSettings",
    "SearchSettings",
    "Settings",
    "get_settings",
    "parse_network_port",
    "project_root",
]

CONFIG_ENV = "GRAPHRAG_CONFIG"


def project_root() -> Path:
    """The checkout's root: relative paths in the settings resolve against it."""
    return Path(__file__).resolve().parent.parent


# An address block and, optionally, the one port allowed on it.
NetworkPort = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, int | None]
_MAX_PORT = 65535


def parse_network_port(entry: str) -> NetworkPort:
    """`10.0.0.0/8`, `127.0.0.1:8080`, `[::1]:8080` or `fd00::/8` as (network, port or None)."""
    host, port = entry.strip(), ""
    if host.startswith("["):
        host, _, rest = host[1:].partition("]")
        if rest and not rest.startswith(":"):
            raise ValueError(f"not an address[:port]: {entry!r}")
        port = rest[1:]
    elif host.count(":") == 1:
        host, port = host.split(":")
    network = ipaddress.ip_network(host, strict=False)
    if not port:
        return network, None
    number = int(port)
    if not 0 < number <= _MAX_PORT:
        raise ValueError(f"not a port: {port!r}")
    return network, number


class ApiSettings(_Section):
    host: str
    port: int
    default_tenant: str
    default_page_size: int
    max_page_size: int
    max_batch_files: int = Field(gt=0, description="files accepted in one batch upload")
    max_body_mb: int = Field(gt=0, description="any request body (uploads, batches); 413 beyond")
    max_json_body_kb: int = Field(gt=0, description="a JSON request body; 413 beyond")
    multipart_slack_kb: int = Field(ge=0, description="multipart framing around one file")
    max_text_field_chars: int = Field(gt=0, description="any one text field of a request; 422")

    @property
    def max_body_bytes(self) -> int:
        return self.max_body_mb * 1024 * 1024

    @property
    def max_json_body_bytes(self) -> int:
        return self.max_json_body_kb * 1024

    @property
    def multipart_slack_bytes(self) -> int:
        return self.multipart_slack_kb * 1024

    rate_limit_requests: int = Field(ge=0, description="requests per key per window; 0: no limit")
    rate_limit_window_s: int = Field(gt=0)


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


class LlmSettings(_Section):
    base_url: str
    model: str
    api_key: SecretStr
    timeout_s: float
    temperature: float
    max_tokens: int
    json_schema: bool
    system_role: bool
    concurrency_limit: int | Literal["auto"] = Field(
        description="background calls at once per model; auto: the server's slot count"
    )
    concurrency_fallback: int = Field(gt=0, description="the limit when auto cannot be read")
    concurrency_lease_s: int
    concurrency_wait_s: float
    concurrency_poll_s: float = Field(gt=0.0)
    props_timeout_s: float = Field(gt=0.0)
    interactive_limit: int = Field(gt=0, description="interactive calls at once per model")
    interactive_wait_s: float = Field(gt=0.0)
    interactive_lease_s: int = Field(gt=0)


class EmbeddingSettings(_Section):
    backend: Literal["local", "openai"]
    model: str
    base_url: str
    api_key: SecretStr
    dim: int
    batch_size: int
    max_seq_length: int
    timeout_s: float
    model_dir: Path | None


class IngestSettings(_Section):
    chunk_size: int
    chunk_overlap: int
    separators: list[str]
    ocr_languages: str
    ocr_dpi: int
    ocr_timeout_s: float
    scanned_min_chars: int
    scanned_image_coverage: float
    min_image_side_px: int
    url_allow_private: bool
    url_allowed_private: list[str] = Field(
        description="non-public address[:port] blocks a URL import may reach"
    )
    url_timeout_s: float = Field(gt=0.0)
    url_total_timeout_s: float = Field(gt=0.0)
    url_max_redirects: int = Field(ge=0)
    stuck_after_s: int
    reconcile_interval_s: int
    vision_model: str | None = Field(
        description="an OpenAI-compatible vision model on the LLM server; None: no captions"
    )
    caption_max_images: int = Field(ge=0, description="images captioned per document")
    caption_max_tokens: int = Field(gt=0, description="length of one caption, in tokens")
    caption_timeout_s: float = Field(gt=0.0, description="one caption request")
    caption_max_chars: int = Field(gt=0, description="a caption is cut to this many characters")
    file_name_max_chars: int = Field(gt=0)
    file_name_max_bytes: int = Field(gt=0, le=255, description="UTF-8 bytes of a stored file name")
    ocr_max_pixels: int
    ocr_max_images_per_page: int
    max_control_char_ratio: float
    max_deliveries: int = Field(gt=0)
    max_requeues: int = Field(gt=0)
    docx_max_entries: int = Field(gt=0)
    docx_max_entry_bytes: int = Field(gt=0)
    docx_max_total_bytes: int = Field(gt=0)
    docx_max_ratio: float = Field(gt=1)
    docx_ratio_min_bytes: int = Field(ge=0)
    html_max_bytes: int = Field(gt=0, description="one HTML page, before it is parsed")
    html_max_depth: int = Field(gt=0, description="elements open at once in an HTML page")
    image_max_pixels: int = Field(gt=0)
    tiff_max_frames: int = Field(gt=0)
    pdf_max_pages: int = Field(gt=0)
    ocr_max_pages: int = Field(ge=0)
    graph_max_chunks: int = Field(gt=0)
    chunk_size_min: int = Field(gt=1)
    chunk_size_max: int = Field(gt=1)
    max_separators: int = Field(gt=0)
    max_separator_chars: int = Field(gt=0)

    @field_validator("url_allowed_private")
    @classmethod
    def _valid_targets(cls, entries: list[str]) -> list[str]:
        for entry in entries:
            parse_network_port(entry)
        return entries


class CelerySettings(_Section):
    docparse_queue: str
    graph_queue: str
    memory_queue: str
    default_queue: str
    prefetch_multiplier: int
    docparse_time_limit_s: int
    graph_time_limit_s: int
    graph_max_retries: int
    # Celery's retry_backoff: whole seconds, at least 1.
    graph_retry_backoff_s: int = Field(ge=1)
    graph_soft_limit_margin_s: int
    docparse_soft_limit_margin_s: int = Field(gt=0)
    retry_backoff_max_s: int
    result_expires_s: int
    beat_schedule_file: Path
    broker_visibility_timeout_s: int
    graph_pool: Literal["threads", "prefork"]
    graph_threads_per_slot: int = Field(ge=1)
    heartbeat_interval_s: float = Field(gt=0.0, description="a worker renews its heartbeat")
    heartbeat_ttl_s: float = Field(gt=0.0, description="a worker silent this long is gone")
    worker_memory_ceiling_mb: int = Field(
        ge=0, description="data of one process that runs tasks (RLIMIT_DATA); 0: none"
    )
    max_memory_per_child_mb: int = Field(
        ge=0, description="a prefork child larger than this after a task is replaced; 0: never"
    )

    @property
    def graph_soft_limit_s(self) -> int:
        """When a graph task fails for its time: Celery's soft limit, and the task's own
        deadline under the threads pool, where Celery enforces no limit."""
        return self.graph_time_limit_s - self.graph_soft_limit_margin_s


class OutboxSettings(_Section):
    relay_interval_s: float
    kick_gap_s: float = Field(ge=0.0)
    lock_retry_s: float = Field(gt=0.0)
    batch_size: int
    graph_in_flight: int
    parse_in_flight: int
    visibility_timeout_s: int
    max_resends: int
    error_max_chars: int


class SearchSettings(_Section):
    """Hybrid retrieval: thresholds, fusion weights, request caps and HNSW tuning."""

    vector_threshold: float = Field(ge=-1.0, le=1.0)
    keyword_threshold: float = Field(ge=0.0, le=1.0)
    rrf_k: int = Field(ge=0)
    vector_weight: float = Field(ge=0.0)
    keyword_weight: float = Field(ge=0.0)
    top_k: int = Field(gt=0)
    max_top_k: int = Field(gt=0)
    max_query_chars: int = Field(gt=0)
    max_knowledge_ids: int = Field(gt=0)
    hnsw_ef_search: int = Field(gt=0)
    hnsw_iterative_scan: Literal["off", "relaxed_order", "strict_order"]
    keyword_match: Literal["any", "all"]
    keyword_max_terms: int = Field(gt=0)
    keyword_common_df: int = Field(gt=0)
    graph_ranker: Literal["ppr", "entity_overlap"]
    graph_weight: float = Field(ge=0.0)
    graph_list_size: int = Field(gt=0)
    graph_candidates: int = Field(gt=0)
    graph_ppr_exponent: float = Field(ge=0.0)
    graph_similarity_exponent: float = Field(ge=0.0)
    graph_max_question_words: int = Field(gt=0)
    graph_min_key_chars: int = Field(gt=0)
    graph_max_keys: int = Field(gt=0)
    graph_word_match_limit: int = Field(ge=0)
    graph_loose_match_weight: float = Field(ge=0.0, le=1.0)
    graph_vector_match_limit: int = Field(ge=0)
    graph_vector_match_threshold: float = Field(ge=-1.0, le=1.0)
    graph_vector_probe: int = Field(gt=0)
    graph_max_instances: int = Field(gt=0)
    graph_max_neighbours: int = Field(ge=0)
    graph_max_chunks_per_entity: int = Field(gt=0)
    graph_hops: int = Field(ge=1, le=2)
    graph_max_expand_keys: int = Field(ge=0)
    graph_max_nodes: int = Field(gt=0)
    graph_ppr_damping: float = Field(gt=0.0, lt=1.0)
    graph_ppr_max_iterations: int = Field(gt=0)
    graph_ppr_tolerance: float = Field(gt=0.0)
    graph_neighbour_decay: float = Field(ge=0.0, le=1.0)
    graph_passage_seed_weight: float = Field(ge=0.0)
    graph_passage_seeds: int = Field(ge=0)
    graph_passage_max_documents: int = Field(ge=0)
    graph_outside_name_weight: float = Field(ge=0.0, le=1.0)
    graph_parallel_bases: int = Field(gt=0)


class ExtractionSettings(_Section):
    """Knowledge-graph extraction: parser caps, tag policy, limits of a KB's ExtractConfig."""

    keep_relations_outside_tags: bool
    name_vectors: bool
    max_name_chars: int = Field(gt=0)
    max_attributes_per_node: int = Field(ge=0)
    max_nodes_per_chunk: int = Field(gt=0)
    max_relations_per_chunk: int = Field(ge=0)
    max_tags: int = Field(ge=0)
    max_example_text_chars: int = Field(ge=0)
    max_custom_instructions_chars: int = Field(ge=0)
    prompt_templates_dir: Path


class GraphSearchSettings(_Section):
    """The public graph-search API: input bounds, result caps and the cuts of long fields."""

    max_entity_chars: int = Field(gt=0)
    default_limit: int = Field(gt=0)
    max_limit: int = Field(gt=0)
    candidate_cap: int = Field(gt=0)
    max_relations: int = Field(gt=0)
    max_relation_types: int = Field(gt=0)
    max_knowledge_ids: int = Field(gt=0)
    max_name_chars: int = Field(gt=0)
    max_attributes: int = Field(ge=0)
    max_attribute_chars: int = Field(gt=0)
    max_chunks_per_item: int = Field(gt=0)
    max_sources: int = Field(ge=0)
    excerpt_chars: int = Field(gt=0)


class ChatSettings(_Section):
    """The chat path: history, retrieval sizes and the prompt budget."""

    history_turns: int
    history_max_messages: int
    top_k: int
    passage_join_max_overlap: int = Field(ge=0)
    max_query_chars: int
    max_kbs: int = Field(gt=0, description="bases of a chat scope or a session's kb_ids")
    max_knowledge_ids: int = Field(gt=0, description="entries of a chat request's knowledge_ids")
    messages_page_size: int = Field(gt=0, description="a session's messages read by default")
    max_messages_page_size: int = Field(gt=0, description="a session's messages read at most")
    context_max_chars: int
    answer_max_tokens: int
    entity_max_tokens: int = Field(gt=0)
    reference_excerpt_chars: int
    agent_max_steps: int = Field(ge=1)
    agent_max_reflections: int = Field(ge=0)
    agent_max_calls_per_step: int = Field(ge=1)
    agent_graph_max_items: int = Field(ge=1)


class AuthSettings(_Section):
    """API keys: whether they are required, and how they are made and hashed."""

    required: bool
    pepper: SecretStr = Field(description="HMAC key of stored key hashes; required in production")
    key_secret_bytes: int = Field(ge=16)
    key_prefix_bytes: int = Field(ge=2, le=16)
    max_key_chars: int = Field(gt=0)
    default_passwords: list[str] = Field(
        description="shipped or well-known passwords that production refuses for its services"
    )


class PreviewSettings(_Section):
    """The admin extraction previews (`/api/v1/initialization/extract/...`)."""

    max_text_chars: int = Field(gt=0)
    max_suggested_tags: int = Field(gt=0)
    max_tokens: int = Field(gt=0)


class FacesSettings(_Section):
    """The OpenAI-compatible endpoint (`/v1`) and the MCP server (`/mcp` and stdio)."""

    model_owner: str = Field(min_length=1, description="`owned_by` of the listed models")
    max_conversation_chars: int = Field(gt=0)
    chars_per_token: float = Field(gt=0)
    mcp_server_name: str = Field(min_length=1)
    mcp_allowed_hosts: list[str]
    mcp_allowed_origins: list[str]
    mcp_max_body_bytes: int = Field(gt=0)


class MetricsSettings(_Section):
    """Prometheus metrics: the workers' exporter and the LLM latency buckets."""

    worker_host: str = Field(description="the address a worker's exporter binds")
    worker_port: int = Field(ge=0, description="a worker's exporter port; 0: no exporter")
    multiproc_dir: Path
    llm_latency_buckets_s: list[float] = Field(min_length=1)


class CliSettings(_Section):
    poll_interval_s: float
    upload_concurrency: int = Field(gt=0)
    wait_timeout_s: float
    demo_kb_name: str
    demo_question: str


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

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        yaml_path = Path(os.environ.get(CONFIG_ENV, project_root() / "config" / "settings.yaml"))
        return (init_settings, env_settings, YamlConfigSettingsSource(settings_cls, yaml_path))

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
