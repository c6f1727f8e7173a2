"""Settings of the agent memory: recall scoring, session close, context budget."""

from __future__ import annotations

from pydantic import Field

from graphrag.settings.base import Section as _Section

__all__ = ["MemoryImportance", "MemorySettings"]


class MemoryImportance(_Section):
    """Importance (0..1) given to each kind of fact when it is stored."""

    qa: float = Field(ge=0.0, le=1.0)
    error: float = Field(ge=0.0, le=1.0)
    files: float = Field(ge=0.0, le=1.0)
    entity: float = Field(ge=0.0, le=1.0)
    relation: float = Field(ge=0.0, le=1.0)
    summary: float = Field(ge=0.0, le=1.0)
    note: float = Field(ge=0.0, le=1.0)


class MemorySettings(_Section):
    """Agent memory: recall scoring, session-start recall, session close, context budget."""

    default_owner: str = Field(min_length=1)
    max_owner_chars: int = Field(gt=0)
    weight_similarity: float = Field(ge=0.0)
    weight_importance: float = Field(ge=0.0)
    weight_recency: float = Field(ge=0.0)
    weight_frequency: float = Field(ge=0.0)
    frequency_cap: int = Field(gt=0)
    min_similarity: float = Field(ge=-1.0, le=1.0)
    recency_decay_s: float = Field(gt=0.0)
    vector_candidates: int = Field(gt=0)
    rank_candidates: int = Field(gt=0)
    identity_query: str = Field(min_length=1)
    identity_k: int = Field(ge=0)
    context_k: int = Field(ge=0)
    graph_k: int = Field(ge=0)
    max_message_entities: int = Field(gt=0)
    dedup_similarity: float = Field(ge=-1.0, le=1.0)
    importance: MemoryImportance
    question_max_chars: int = Field(gt=0)
    answer_max_chars: int = Field(gt=0)
    error_max_chars: int = Field(gt=0)
    max_errors_per_session: int = Field(ge=0)
    max_files_listed: int = Field(ge=0)
    fact_max_chars: int = Field(gt=0)
    error_words: list[str] = Field(min_length=1)
    file_extensions: list[str]
    llm_extraction: bool
    extract_prompt: str
    transcript_max_chars: int = Field(gt=0)
    idle_close_s: int = Field(gt=0)
    sweep_interval_s: int = Field(gt=0)
    sweep_batch: int = Field(gt=0)
    close_time_limit_s: int = Field(gt=0)
    close_max_retries: int = Field(ge=0)
    close_retry_backoff_s: int = Field(ge=1)  # Celery's retry_backoff: whole seconds
    compact_threshold_chars: int = Field(gt=0)
    tool_result_max_chars: int = Field(gt=0)
    keep_last_messages: int = Field(ge=0)
    summary_objective_chars: int = Field(gt=0)
    summary_max_actions: int = Field(ge=0)
    summary_action_chars: int = Field(gt=0)
    summary_progress_chars: int = Field(gt=0)
    core_sections: list[str]
    core_section_max_chars: int = Field(gt=0)
    core_text_max_chars: int = Field(gt=0)
    search_default_k: int = Field(gt=0)
    search_max_k: int = Field(gt=0)
    max_query_chars: int = Field(gt=0)
    neighbourhood_max_relations: int = Field(gt=0)
    neighbourhood_max_facts: int = Field(gt=0)
    subgraph_entity_k: int = Field(gt=0)
    subgraph_max_hops: int = Field(gt=0)
    subgraph_max_nodes: int = Field(gt=0)
    subgraph_max_facts: int = Field(gt=0)
