"""Settings of entity resolution: candidate bounds, rule thresholds and the LLM's budget."""

from __future__ import annotations

from pydantic import Field

from graphrag.settings.base import Section as _Section

__all__ = ["ResolutionSettings"]


class ResolutionSettings(_Section):
    """How a document's entities are joined to the base's resolved entities after its graph."""

    enabled: bool = Field(description="run resolution after each document's graph")
    max_entities_per_document: int = Field(gt=0, description="entities resolved per document")
    max_candidates: int = Field(gt=0, description="resolved entities compared per entity")
    word_candidates: int = Field(ge=0, description="name keys found by shared words")
    document_candidates: int = Field(
        ge=0, description="entities made earlier in the document weighed per shared name key"
    )
    word_query_terms: int = Field(ge=0, description="other name words that rank those keys")
    vector_candidates: int = Field(ge=0, description="name keys found by near name vectors")
    vector_probe: int = Field(gt=0, description="read from the shared vector index")
    vector_min_score: float = Field(ge=0, le=1, description="cosine of a near name")
    neighbour_candidates: int = Field(ge=0, description="entities found by shared neighbours")
    max_neighbours: int = Field(gt=0, description="neighbours compared per entity")
    max_members: int = Field(gt=0, description="members of a resolved entity compared")
    max_instances_read: int = Field(gt=0, description="resolved document nodes of one key read")
    conflict_min_neighbours: int = Field(
        gt=0, description="neighbours both sides need before sharing none is a conflict"
    )
    min_shared_neighbours: int = Field(
        gt=0, description="shared neighbours that confirm a near name"
    )
    part_min_shared_neighbours: int = Field(
        gt=0, description="shared neighbours that confirm a part of a name"
    )
    typo_min_similarity: float = Field(gt=0, le=1, description="edit similarity of a typo")
    typo_min_chars: int = Field(gt=0, description="the words that differ in a typo, at least")
    typo_max_chars: int = Field(gt=0, description="longer keys are not compared letter by letter")
    typo_lookup_chars: int = Field(gt=0, description="first or last letters a typo keeps")
    titles: list[str] = Field(description="words dropped before names are compared")
    acronym_skip_words: list[str] = Field(description="words an acronym leaves out")
    llm_enabled: bool = Field(description="ambiguous pairs asked to the LLM; off: kept apart")
    llm_asks_homonyms: bool = Field(
        description="a same-name pair in conflict is asked too (off: kept apart by the rule)"
    )
    llm_batch_pairs: int = Field(gt=0, description="ambiguous pairs in one LLM call")
    llm_max_calls_per_document: int = Field(ge=0)
    llm_max_tokens: int = Field(gt=0)
    llm_temperature: float = Field(ge=0.0, le=2.0)
    prompt_attributes: int = Field(ge=0, description="attributes per side in the prompt")
    prompt_neighbours: int = Field(ge=0, description="relations per side in the prompt")
    max_audit_rows: int = Field(gt=0, description="members and decisions in an audit answer")
    max_split_documents: int = Field(gt=0, description="documents named in one split")
    run_documents: int = Field(gt=0, description="documents one run resolves per lock hold")
    batch_documents: int = Field(
        gt=0, description="documents read, planned and written together in a run"
    )
    run_budget_s: float = Field(gt=0, description="a run takes no new document after this")
    task_time_limit_s: int = Field(gt=0, description="one resolution task's hard time limit")
    retry_backoff_s: int = Field(gt=0)
    max_retries: int = Field(ge=0)
