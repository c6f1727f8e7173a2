"""What hybrid retrieval takes and returns: queries, scopes, per-method and fused hits, timings."""

from __future__ import annotations

import uuid
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from graphrag.text_input import Bounded, InputText, RequestModel
from graphrag.value_model import ValueModel

__all__ = [
    "ChunkRef",
    "GraphContribution",
    "KbScope",
    "MatchType",
    "QueryText",
    "RetrievalRequest",
    "RetrievalResult",
    "ScoredChunk",
    "SearchHit",
    "SearchRequest",
    "SearchResponse",
    "StageTimings",
]


def _clean_query(value: str) -> str:
    # PostgreSQL text cannot hold NUL and a lone surrogate cannot be encoded for the driver or the
    # tokenizer: both would surface as server errors, so they are settled here as input problems.
    text = value.replace("\x00", " ").strip()
    if not text:
        raise ValueError("the query is empty")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("the query is not valid Unicode text") from exc
    return text


QueryText = Annotated[InputText, AfterValidator(_clean_query)]


class MatchType(StrEnum):
    """Which methods returned a hit: one of them, both (`hybrid`), or the graph complement."""

    VECTOR = "vector"
    KEYWORD = "keyword"
    HYBRID = "hybrid"
    GRAPH = "graph"


class ChunkRef(ValueModel):
    """A chunk as retrieval returns it: where it comes from and its text."""

    chunk_id: uuid.UUID
    knowledge_id: uuid.UUID
    kb_id: uuid.UUID
    seq: int
    page: int | None
    chunk_type: str
    content: str
    file_name: str


class ScoredChunk(ChunkRef):
    """One method's hit; `score` is in 0..1 (cosine similarity, or the normalised text rank)."""

    score: float


class GraphContribution(ValueModel):
    """How the graph ranked a chunk: its graph score and rank, the entities behind it, the path
    that led there (an entity, or entity, relation, entity), and, when it was reached through an
    entity it shares with one of the best passages of the other searches, that passage."""

    score: float
    rank: int = Field(ge=1)
    seeds: list[str]
    path: list[str]
    via_chunk_id: uuid.UUID | None = None


class SearchHit(ChunkRef):
    """A hit after fusion: the fused score and final rank, plus each method's own score and rank.

    `match_type` is `graph` for a chunk only the graph found, `hybrid` when several methods did;
    `graph` says how the graph contributed whenever it did.
    """

    score: float
    rank: int = Field(ge=1)
    match_type: MatchType
    vector_score: float | None = None
    vector_rank: int | None = None
    keyword_score: float | None = None
    keyword_rank: int | None = None
    graph: GraphContribution | None = None


class KbScope(ValueModel):
    """A knowledge base to search and which methods its indexing strategy allows."""

    kb_id: uuid.UUID
    vector: bool
    keyword: bool
    graph_on: bool


class RetrievalRequest(ValueModel):
    """One retrieval over one or more knowledge bases, with every threshold resolved."""

    query: QueryText
    scopes: list[KbScope] = Field(min_length=1)
    knowledge_ids: list[uuid.UUID] | None = None
    top_k: int = Field(ge=1)
    vector_threshold: float = Field(ge=-1.0, le=1.0)
    keyword_threshold: float = Field(ge=0.0, le=1.0)
    use_vector: bool = True
    use_keyword: bool = True
    use_graph: bool = True


class StageTimings(BaseModel):
    """Wall time of each retrieval stage in milliseconds; a stage that did not run is 0."""

    embed_ms: float = 0.0
    vector_ms: float = 0.0
    keyword_ms: float = 0.0
    fusion_ms: float = 0.0
    graph_ms: float = 0.0
    graph_read_ms: float = 0.0
    graph_rank_ms: float = 0.0
    total_ms: float = 0.0


class RetrievalResult(BaseModel):
    """Ranked hits (vector, keyword and graph lists fused) and what actually ran."""

    hits: list[SearchHit]
    vector_used: bool
    keyword_used: bool
    graph_used: bool
    vector_candidates: int
    keyword_candidates: int
    graph_candidates: int = 0
    graph_seeds: list[str] = Field(default_factory=list)
    graph_truncated: bool = False
    # Vectors without a positive finite norm (an embedding server's zeros): the question's vector
    # (then no vector search) and the question's entity names (then no near-name match).
    unsearchable_vectors: int = 0
    timings: StageTimings


class SearchRequest(RequestModel):
    """Body of `POST /knowledge-bases/{id}/search`; unset values take the search settings.

    `use_graph` ranks chunks reached through the base's knowledge graph into the results when
    the base's graph is on; the response says whether it ran and which entities seeded it.
    """

    model_config = ConfigDict(extra="forbid")

    query: QueryText
    top_k: int | None = Field(default=None, ge=1)
    vector_threshold: float | None = Field(default=None, ge=-1.0, le=1.0)
    keyword_threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    use_vector: bool = True
    use_keyword: bool = True
    use_graph: bool = True
    knowledge_ids: Annotated[list[uuid.UUID], Bounded("search.max_knowledge_ids")] | None = Field(
        default=None, min_length=1
    )


class SearchResponse(BaseModel):
    """Ranked chunks of one knowledge base with their scores, match types and stage timings."""

    kb_id: uuid.UUID
    query: str
    hits: list[SearchHit]
    vector_used: bool
    keyword_used: bool
    graph_used: bool
    graph_seeds: list[str] = Field(default_factory=list)
    graph_truncated: bool = False
    unsearchable_vectors: int = 0  # embeddings that could not be searched, skipped (see models)
    timings: StageTimings
