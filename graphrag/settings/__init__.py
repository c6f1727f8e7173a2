"""Typed settings: `config/settings.yaml` supplies every default, environment variables override.

Environment names are the section and the field joined by one underscore, split once:
`NEO4J_URI` sets `neo4j.uri`, `LLM_BASE_URL` sets `llm.base_url`, `DATABASE_URL` sets
`database.url`. A section's nested group is named the same way: `SEARCH_GRAPH_MAX_KEYS` sets
`search.graph.max_keys` (see `sources`). Top-level fields such as `MAX_FILE_SIZE_MB` and
`STORAGE_DIR` keep their names.

One module per section or small group of sections; `root` assembles them into `Settings`.
Import from this package, not from its modules.
"""

from __future__ import annotations

from graphrag.settings.api import ApiSettings
from graphrag.settings.auth import AuthSettings
from graphrag.settings.base import NetworkPort, parse_network_port, project_root
from graphrag.settings.chat import ChatSettings, FastPathRule, FastPathSettings
from graphrag.settings.evaluation import EvaluationSettings
from graphrag.settings.extraction import ExtractionSettings, PreviewSettings
from graphrag.settings.faces import FacesSettings
from graphrag.settings.ingest import IngestSettings
from graphrag.settings.llm import SCHEMA_EMBEDDING_DIM, EmbeddingSettings, LlmSettings
from graphrag.settings.memory import MemoryImportance, MemorySettings
from graphrag.settings.ops import CliSettings, MetricsSettings
from graphrag.settings.resolution import ResolutionSettings
from graphrag.settings.root import Settings, get_settings
from graphrag.settings.search import GraphRetrievalSettings, GraphSearchSettings, SearchSettings
from graphrag.settings.stores import DatabaseSettings, Neo4jSettings, RedisSettings
from graphrag.settings.tasks import CelerySettings, OutboxSettings

__all__ = [
    "SCHEMA_EMBEDDING_DIM",
    "ApiSettings",
    "AuthSettings",
    "CelerySettings",
    "ChatSettings",
    "CliSettings",
    "DatabaseSettings",
    "EmbeddingSettings",
    "EvaluationSettings",
    "ExtractionSettings",
    "FacesSettings",
    "FastPathRule",
    "FastPathSettings",
    "GraphRetrievalSettings",
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
    "ResolutionSettings",
    "SearchSettings",
    "Settings",
    "get_settings",
    "parse_network_port",
    "project_root",
]
