"""Settings of retrieval: hybrid search (with its graph branch) and the public graph search."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from graphrag.settings.base import Section as _Section

__all__ = ["GraphRetrievalSettings", "GraphSearchSettings", "SearchSettings"]


class GraphRetrievalSettings(_Section):
    """The graph branch of hybrid retrieval (`search.graph`): seeding, the walk, the graph list."""

    ranker: Literal["ppr", "entity_overlap"]
    weight: float = Field(ge=0.0)
    list_size: int = Field(gt=0)
    candidates: int = Field(gt=0)
    ppr_exponent: float = Field(ge=0.0)
    similarity_exponent: float = Field(ge=0.0)
    max_question_words: int = Field(gt=0)
    min_key_chars: int = Field(gt=0)
    max_keys: int = Field(gt=0)
    word_match_limit: int = Field(ge=0)
    loose_match_weight: float = Field(ge=0.0, le=1.0)
    vector_match_limit: int = Field(ge=0)
    vector_match_threshold: float = Field(ge=-1.0, le=1.0)
    vector_probe: int = Field(gt=0)
    max_instances: int = Field(gt=0)
    follow_resolution: bool = Field(
        description="a key's nodes bring their resolved entities' other nodes"
    )
    max_neighbours: int = Field(ge=0)
    max_chunks_per_entity: int = Field(gt=0)
    hops: int = Field(ge=1, le=2)
    max_expand_keys: int = Field(ge=0)
    max_nodes: int = Field(gt=0)
    ppr_damping: float = Field(gt=0.0, lt=1.0)
    ppr_max_iterations: int = Field(gt=0)
    ppr_tolerance: float = Field(gt=0.0)
    neighbour_decay: float = Field(ge=0.0, le=1.0)
    passage_seed_weight: float = Field(ge=0.0)
    passage_seeds: int = Field(ge=0)
    passage_max_documents: int = Field(ge=0)
    outside_name_weight: float = Field(ge=0.0, le=1.0)
    parallel_bases: int = Field(gt=0)


class SearchSettings(_Section):
    """Hybrid retrieval: thresholds, fusion weights, request caps, HNSW tuning, the graph branch."""

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
    graph: GraphRetrievalSettings


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
    match_timeout_s: float = Field(gt=0, description="Neo4j time budget of the name scan")
