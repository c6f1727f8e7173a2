"""Keyword search for questions: chunks holding any of the query's words, ranked by how much of
the query's rare-word weight they hold.

A question rarely has all its words in one chunk, so requiring them all (the search-box
behaviour) finds nothing; matching any word with PostgreSQL's own rank favours chunks that
repeat common words. Here each of the query's lexemes (stemmed, stop words dropped, by the same
text-search configuration as the chunks) is weighted by its inverse document frequency in the
bases searched, `ln(1 + (N - df + 0.5) / (df + 0.5))` as in BM25, and a chunk scores the share
of the query's total weight that its lexemes cover: 1.0 holds every word, a chunk holding only
the rarest word can outrank one holding several common ones. Document frequencies come from
the GIN index, one count per lexeme (at most `max_terms` of them, each stopping at
`common_df`), and N from the documents' chunk counts, in the same statement. Only chunks
holding a word rarer than that are candidates, so a question made of common words costs no
more than one made of rare ones.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import Float, Select, cast, func, literal, select
from sqlalchemy.dialects.postgresql import REGCONFIG
from sqlalchemy.orm import Session

from graphrag.db.models import TEXT_SEARCH_CONFIG, Chunk, Knowledge
from graphrag.search.chunk_select import ChunkQuery, best_scored, visible_chunks
from graphrag.search.models import ScoredChunk

__all__ = ["keyword_search_any"]

# Lexemes are already stemmed and lower-cased: matching them needs no further processing.
_VERBATIM_CONFIG = "simple"
_BM25_HALF = 0.5


def _ranked_query(
    query: str,
    kb_ids: Sequence[uuid.UUID],
    knowledge_ids: Sequence[uuid.UUID] | None,
    max_terms: int,
    common_df: int,
) -> Select[tuple[object, ...]]:
    config = cast(literal(TEXT_SEARCH_CONFIG), REGCONFIG)
    lexemes = (
        select(func.unnest(func.tsvector_to_array(func.to_tsvector(config, query))).label("lexeme"))
        .limit(max_terms)
        .cte("lexemes")
    )
    term = func.plainto_tsquery(cast(literal(_VERBATIM_CONFIG), REGCONFIG), lexemes.c.lexeme)
    # Counting stops at `common_df`: the cost of a common word stays bounded.
    bounded = (
        select(literal(1).label("hit"))
        .select_from(Chunk)
        .where(Chunk.kb_id.in_(kb_ids), Chunk.tsv.op("@@")(term))
        .limit(common_df)
        .correlate(lexemes)
        .subquery("bounded")
    )
    df = select(func.count()).select_from(bounded).scalar_subquery()
    # N from the documents' chunk counts: one row a document, not an index scan of every chunk.
    total = (
        select(func.coalesce(func.sum(Knowledge.chunk_count), 0))
        .where(Knowledge.kb_id.in_(kb_ids))
        .scalar_subquery()
    )
    stats = (
        select(lexemes.c.lexeme, term.label("term"), df.label("df"))
        .cte("stats")
        .prefix_with("MATERIALIZED")
    )
    idf = func.ln(1.0 + (total - stats.c.df + _BM25_HALF) / (stats.c.df + _BM25_HALF))
    weights = select(stats.c.term, cast(idf, Float).label("idf")).cte("weights")
    # Candidates hold a rare word, found through the GIN index with one OR query of the rare
    # words; common words then only add their (small) weight to the candidates' scores.
    rare_words = (
        select(func.string_agg(func.quote_literal(stats.c.lexeme), literal(" | ")))
        .where(stats.c.df < common_df)
        .scalar_subquery()
    )
    rare = func.to_tsquery(cast(literal(_VERBATIM_CONFIG), REGCONFIG), rare_words)
    candidates = (
        select(Chunk.id)
        .where(Chunk.kb_id.in_(kb_ids), Chunk.tsv.op("@@")(rare))
        .cte("candidates")
        .prefix_with("MATERIALIZED")
    )
    whole = select(func.sum(weights.c.idf)).scalar_subquery()
    share = cast(func.sum(weights.c.idf) / func.nullif(whole, 0.0), Float)
    return (
        visible_chunks(share, kb_ids, knowledge_ids)
        .join(candidates, candidates.c.id == Chunk.id)
        .join(weights, Chunk.tsv.op("@@")(weights.c.term))
        .group_by(Chunk.id, Knowledge.id)
    )


def keyword_search_any(
    session: Session, query: str, chunks: ChunkQuery, *, max_terms: int, common_df: int
) -> list[ScoredChunk]:
    """At most `chunks.limit` visible chunks holding at least the threshold's share of the
    query's word weight and at least one word found in fewer than `common_df` chunks of the
    bases; best first, equal scores ordered by chunk id (reproducible results)."""
    if not chunks.kb_ids:
        return []
    scored = _ranked_query(query, chunks.kb_ids, chunks.knowledge_ids, max_terms, common_df)
    return best_scored(session, scored, chunks)
