"""Chunks matching the query's words, through PostgreSQL full-text search and the GIN index.

Query parsing: `websearch_to_tsquery` reads what people type into search boxes (bare words are
ANDed, `"quoted phrase"`, `or`, `-excluded`) and, unlike `to_tsquery`, never raises on stray
quotes, operators or punctuation; input without any word gives an empty query that matches
nothing. The query is a bound parameter, never part of the SQL text.

Score: `ts_rank_cd` (cover density: how many times the query's terms occur, and how close
together) with normalisation flag 32, which maps a rank r >= 0 to r / (r + 1) in [0, 1).
Chunk lexemes carry no A-D labels, so they all count as class D, whose default weight is 0.1;
with that weight one tight occurrence of the query would score 0.09, under any useful
threshold. Unit weights make the scale readable: one occurrence of the whole query with its
terms adjacent scores 0.5, repeated occurrences approach 1, terms scattered apart score less.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Float, cast, func, literal
from sqlalchemy.dialects.postgresql import ARRAY, REAL, REGCONFIG
from sqlalchemy.orm import Session

from graphrag.db.models import TEXT_SEARCH_CONFIG, Chunk
from graphrag.search.chunk_select import ChunkQuery, best_scored, visible_chunks
from graphrag.search.models import ScoredChunk

__all__ = ["keyword_search"]

# The weights of lexeme classes {D, C, B, A}, as ts_rank_cd takes them; see the module docstring.
UNIT_CLASS_WEIGHTS = [1.0, 1.0, 1.0, 1.0]
# ts_rank_cd normalisation flag: divide the rank by itself + 1.
RANK_OVER_RANK_PLUS_ONE = 32


def _tsquery(query: str) -> ColumnElement[object]:
    # The chunks' `tsv` column is generated with the same configuration (a schema constant):
    # a different one here would stem or split words differently and silently miss matches.
    return func.websearch_to_tsquery(cast(literal(TEXT_SEARCH_CONFIG), REGCONFIG), query)


def keyword_search(session: Session, query: str, chunks: ChunkQuery) -> list[ScoredChunk]:
    """At most `chunks.limit` visible chunks matching `query` with a normalised rank at least
    the threshold; best first, equal ranks ordered by chunk id (reproducible results)."""
    if not chunks.kb_ids:
        return []
    tsquery = _tsquery(query)
    weights = cast(literal(UNIT_CLASS_WEIGHTS, ARRAY(Float)), ARRAY(REAL))
    rank = func.ts_rank_cd(weights, Chunk.tsv, tsquery, RANK_OVER_RANK_PLUS_ONE, type_=Float)
    scored = visible_chunks(rank, chunks.kb_ids, chunks.knowledge_ids)
    return best_scored(session, scored.where(Chunk.tsv.op("@@")(tsquery)), chunks)
