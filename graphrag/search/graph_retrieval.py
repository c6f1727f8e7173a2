"""The one graph path: chunks ranked through the knowledge graph for a question.

Used by `/search`, the knowledge chat and the agent's `query_knowledge_graph` tool. Per
graph-enabled base (in parallel when there are several):
1. the question's candidate name keys (its runs of words, and names a model extracted from it),
   the keys holding every word of one of its names, the keys whose name vector is near one, and
   the keys of the entities read in the best passages the other searches found (passage seeds)
   are looked up among the base's entity keys, with each key's document nodes, their chunks and
   related entities, in one query; keys covered by a longer matched key are dropped, and runs of
   words outside the question's names count little when a name matched;
2. with `search.graph.hops` 2, the related entities' keys are looked up in turn (a second query);
3. the chunks of that subgraph are ranked (see `graph_rank`): the walk starts at the question's
   entities and the passage seeds and steps across documents through shared entity keys (the
   cross-document links), so a passage about the entity a top passage names can rank high
   although it shares no word with the question; then the visible chunks are loaded from
   PostgreSQL under the same rule as every search (`chunk_select.visible_chunks`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from threading import Lock
from time import perf_counter

from sqlalchemy import literal
from sqlalchemy.orm import Session

from graphrag.db.models import Chunk
from graphrag.graph.name_vectors import EmbedTexts
from graphrag.graph.names import (
    QuestionKey,
    capitalised_spans,
    name_key,
    name_tokens,
    question_keys,
)
from graphrag.graph.neighbourhood import (
    KeyInstance,
    MatchKind,
    NameMatching,
    NeighbourhoodLimits,
    PassageRef,
)
from graphrag.graph.store import GraphStore
from graphrag.graph.vector_checks import VectorUse, searchable_only
from graphrag.search.chunk_select import SCORE, scored_chunk, visible_chunks
from graphrag.search.fusion import GraphListHit
from graphrag.search.graph_rank import (
    ChunkEvidence,
    GraphRanker,
    PprParams,
    build_graph,
    rank_chunks,
    seed_weights,
)
from graphrag.search.models import GraphContribution
from graphrag.settings import SearchSettings
from graphrag.timing import elapsed_ms

__all__ = [
    "GraphQuery",
    "GraphRanking",
    "SeedPassage",
    "find_graph_hits",
    "rank_in_graph",
    "visible_graph_hits",
]


@dataclass(frozen=True)
class SeedPassage:
    """One of the best passages the other searches found, with the name keys of the entities
    read in it: the graph walk starts there too."""

    kb_id: uuid.UUID
    chunk_id: uuid.UUID
    keys: tuple[str, ...]


@dataclass(frozen=True)
class GraphQuery:
    """A question to rank chunks for, in some bases (and documents), with optional extra seeds."""

    question: str
    kb_ids: Sequence[uuid.UUID]
    entities: Sequence[str] = ()  # names a model extracted from the question
    knowledge_ids: Sequence[uuid.UUID] | None = None
    passages: Sequence[SeedPassage] = ()  # best first
    # Embeds the names the read did not find exactly, for near matches; None: no near matches.
    embed_names: EmbedTexts | None = field(default=None, compare=False)

    def names(self) -> list[str]:
        """The question's names: the model's, or else its capitalised spans."""
        return list(self.entities) or capitalised_spans(self.question)


@dataclass
class GraphRanking:
    """The graph list (best first, visible chunks only), its seeds, caps hit and timings."""

    evidence: list[ChunkEvidence] = field(default_factory=list)
    hits: list[GraphListHit] = field(default_factory=list)
    seeds: list[str] = field(default_factory=list)
    truncated: bool = False
    read_ms: float = 0.0
    rank_ms: float = 0.0
    # Name vectors without a positive finite norm, left out of the near-name lookups.
    unsearchable_vectors: int = 0


@dataclass
class _BaseRanking:
    evidence: list[ChunkEvidence]
    seeds: list[str]
    truncated: bool
    read_ms: float
    rank_ms: float
    unsearchable_vectors: int


def _kept_keys(matched: Sequence[QuestionKey]) -> list[QuestionKey]:
    """Longest matches first; a run whose words a longer kept run already covers is dropped."""
    covered: set[int] = set()
    kept: list[QuestionKey] = []
    for key in sorted(matched, key=lambda k: -k.width):
        positions = set(range(key.start, key.end))
        if key.width == 0 or not positions <= covered:
            kept.append(key)
            covered |= positions
    return kept


def _limits(settings: SearchSettings, neighbours: bool) -> NeighbourhoodLimits:
    return NeighbourhoodLimits(
        max_instances=settings.graph.max_instances,
        max_neighbours=settings.graph.max_neighbours if neighbours else 0,
        max_chunks=settings.graph.max_chunks_per_entity,
        follow_resolution=settings.graph.follow_resolution,
    )


def _matching(settings: SearchSettings, query: GraphQuery, kb_id: uuid.UUID) -> NameMatching:
    """Beyond exact keys: keys holding every word of a question's name, and the keys of the
    base's passage seeds."""
    passages = [PassageRef(str(p.chunk_id), p.keys) for p in query.passages if p.kb_id == kb_id]
    return NameMatching(
        names=query.names(),
        word_limit=settings.graph.word_match_limit,
        passages=passages,
        passage_max_documents=settings.graph.passage_max_documents,
    )


def _near_matches(
    store: GraphStore,
    settings: SearchSettings,
    query: GraphQuery,
    kb_id: uuid.UUID,
    exact: set[str],
) -> tuple[list[KeyInstance], int]:
    """The keys whose name vector is near one of the question's names that the first read did
    not find exactly (a second read; none when every name was found, so most questions pay
    neither the names' embedding nor the vector index), and how many of those names' vectors
    could not be searched (no positive finite norm: left out, never sent to the index)."""
    if query.embed_names is None or settings.graph.vector_match_limit <= 0:
        return [], 0
    missing = [name for name in query.names() if not _found(name_key(name), exact)]
    if not missing:
        return [], 0
    embedded = dict(zip(missing, query.embed_names(missing), strict=True))
    vectors = searchable_only(VectorUse.NAME_QUERY, embedded)
    unsearchable = len(embedded) - len(vectors)
    if not vectors:
        return [], unsearchable
    matching = NameMatching(
        vectors=vectors,
        vector_limit=settings.graph.vector_match_limit,
        vector_probe=settings.graph.vector_probe,
        vector_threshold=settings.graph.vector_match_threshold,
    )
    limits = _limits(settings, neighbours=True)
    rows = store.entity_neighbourhood(kb_id, [], query.knowledge_ids, limits, matching)
    return rows, unsearchable


def _found(name: str, exact: set[str]) -> bool:
    """Whether a name's key was found exactly: as a key, inside a longer matched run ("heinkel
    hd" in "heinkel hd 23"), or as a matched run of two words or more inside it."""
    padded = f" {name} "
    return any(padded in f" {key} " or (" " in key and f" {key} " in padded) for key in exact)


def _match_shares(rows: Sequence[KeyInstance], exact: set[str]) -> dict[str, float]:
    """Each key a question's name found beyond its exact keys, weighted: a word match by the
    share of the key's words its name covers, a near match by the vectors' similarity. A name
    found as an exact key (in `exact`) needs no looser match: its word and near matches are
    dropped. (Keys found only through a passage are not the question's: they are not here.)"""
    shares: dict[str, float] = {}
    for row in rows:
        for match in row.matches:
            if match.kind is MatchKind.PASSAGE or _found(name_key(match.name), exact):
                continue
            if match.kind is MatchKind.WORDS:
                size = len(name_tokens(match.name))
                share = min(1.0, size / max(len(row.key.split()), 1))
            else:
                share = match.score
            shares[row.key] = max(shares.get(row.key, 0.0), share)
    return shares


def _run_weights(
    keys: Sequence[QuestionKey], names: Sequence[str], outside_weight: float
) -> dict[str, float]:
    """Each matched run of the question's words, weighted 1 when it shares a word with one of
    the question's names ("Cooper Firearms" and "Cooper Firearms of Montana", "Jamaican
    reggae" and "Jamaican") and `outside_weight` otherwise ("which", "produced"): such runs name
    entities too, but rarely the ones asked about. When no run meets a name, every run
    weighs 1."""
    name_words = {word for name in names for word in name_tokens(name)}
    inside = {k.key for k in keys if name_words.intersection(k.key.split())}
    if not inside:
        return {k.key: 1.0 for k in keys}
    return {k.key: 1.0 if k.key in inside else outside_weight for k in keys}


def _passage_weights(
    query: GraphQuery, kb_id: uuid.UUID, seeds: Mapping[str, float], settings: SearchSettings
) -> dict[str, float]:
    """Restart weights of the base's passage seeds: the n-th best passage weighs 1/n of
    `graph.passage_seed_weight` times the mean weight of the question's entity seeds."""
    unit = sum(seeds.values()) / len(seeds) if seeds else 1.0
    weights: dict[str, float] = {}
    for rank, passage in enumerate(query.passages, start=1):
        if passage.kb_id == kb_id:
            weights[str(passage.chunk_id)] = settings.graph.passage_seed_weight * unit / rank
    return weights


def _question_seeds(
    rows: Sequence[KeyInstance],
    by_key: Mapping[str, QuestionKey],
    query: GraphQuery,
    settings: SearchSettings,
) -> tuple[list[KeyInstance], dict[str, float]]:
    """The rows of the keys the question found, and each such key's restart weight: its
    specificity times how it was found (a run inside a name, a run outside, a loose match)."""
    matched = {r.key for r in rows}
    shares = _match_shares(rows, {key for key in matched if key in by_key})
    kept_runs = _kept_keys([by_key[key] for key in matched if key in by_key])
    runs = _run_weights(kept_runs, query.names(), settings.graph.outside_name_weight)
    loose = {key: share * settings.graph.loose_match_weight for key, share in shares.items()}
    kept = set(runs) | {key for key in loose if key in matched}
    seed_rows = [r for r in rows if r.key in kept]
    weights = {
        key: weight * runs.get(key, loose.get(key, 1.0))
        for key, weight in seed_weights(seed_rows, kept).items()
    }
    return seed_rows, weights


def _rank_base(
    store: GraphStore, settings: SearchSettings, query: GraphQuery, kb_id: uuid.UUID
) -> _BaseRanking:
    start = perf_counter()
    candidates = question_keys(
        query.question,
        query.entities,
        max_words=settings.graph.max_question_words,
        min_chars=settings.graph.min_key_chars,
        max_keys=settings.graph.max_keys,
    )
    by_key = {c.key: c for c in candidates}
    rows = store.entity_neighbourhood(
        kb_id,
        list(by_key),
        query.knowledge_ids,
        _limits(settings, neighbours=True),
        _matching(settings, query, kb_id),
    )
    near, unsearchable = _near_matches(
        store, settings, query, kb_id, {r.key for r in rows if r.key in by_key}
    )
    rows += near
    seed_rows, weights = _question_seeds(rows, by_key, query, settings)
    related = (link.key for r in seed_rows for link in r.neighbours)
    read = {r.key for r in rows}
    expand = list(dict.fromkeys(key for key in related if key and key not in read))
    truncated = len(expand) > settings.graph.max_expand_keys
    hop_rows: list[KeyInstance] = []
    if settings.graph.hops > 1 and expand:
        hop_rows = store.entity_neighbourhood(
            kb_id,
            expand[: settings.graph.max_expand_keys],
            query.knowledge_ids,
            _limits(settings, neighbours=False),
        )
    read_done = perf_counter()
    graph = build_graph([*rows, *hop_rows], settings.graph.max_nodes)
    params = PprParams(
        damping=settings.graph.ppr_damping,
        max_iterations=settings.graph.ppr_max_iterations,
        tolerance=settings.graph.ppr_tolerance,
        neighbour_decay=settings.graph.neighbour_decay,
    )
    passage_weights = _passage_weights(query, kb_id, weights, settings)
    evidence = rank_chunks(
        graph, weights, passage_weights, GraphRanker(settings.graph.ranker), params
    )
    return _BaseRanking(
        evidence=evidence,
        seeds=sorted({graph.names.get(key, key) for key, w in weights.items() if w > 0}),
        truncated=truncated or graph.truncated,
        read_ms=elapsed_ms(start, read_done),
        rank_ms=elapsed_ms(read_done),
        unsearchable_vectors=unsearchable,
    )


def _graph_list_score(
    ppr: float, top: float, similarity: float | None, settings: SearchSettings
) -> float:
    """The graph list's order: the graph score, and, given the question's vector, how close the
    chunk is to it (the graph picks the candidates, meaning orders them)."""
    if similarity is None or settings.graph.similarity_exponent == 0:
        return ppr
    share = (ppr / top) ** settings.graph.ppr_exponent if top > 0 else 0.0
    return float(share * max(similarity, 0.0) ** settings.graph.similarity_exponent)


def _load_visible(
    session: Session,
    evidence: Sequence[ChunkEvidence],
    query: GraphQuery,
    settings: SearchSettings,
    query_vector: Sequence[float] | None,
) -> list[GraphListHit]:
    """The graph list: the visible chunks among the best `graph.candidates` ranked ones,
    ordered by `_graph_list_score`, at most `graph.list_size`."""
    ranked: list[tuple[uuid.UUID, ChunkEvidence]] = []
    for item in evidence[: settings.graph.candidates]:
        try:
            ranked.append((uuid.UUID(item.chunk_id), item))
        except ValueError:
            continue  # a chunk id that is not one (a hand-made node) names no chunk
    if not ranked:
        return []
    similarity = (
        1.0 - Chunk.embedding.cosine_distance(list(query_vector))
        if query_vector is not None
        else literal(0.0)
    )
    select_rows = visible_chunks(similarity, query.kb_ids, query.knowledge_ids).where(
        Chunk.id.in_([chunk_id for chunk_id, _ in ranked])
    )
    rows = {row["chunk_id"]: row for row in session.execute(select_rows).mappings()}
    top = ranked[0][1].score
    scored = sorted(
        (
            (
                _graph_list_score(
                    item.score,
                    top,
                    None if query_vector is None else float(rows[chunk_id][SCORE] or 0.0),
                    settings,
                ),
                chunk_id,
                item,
            )
            for chunk_id, item in ranked
            if chunk_id in rows
        ),
        key=lambda entry: (-entry[0], str(entry[1])),
    )
    hits: list[GraphListHit] = []
    for score, chunk_id, item in scored[: settings.graph.list_size]:
        contribution = GraphContribution(
            score=round(score, 6),
            rank=len(hits) + 1,
            seeds=list(item.seeds),
            path=list(item.path),
            via_chunk_id=uuid.UUID(item.via_chunk) if item.via_chunk else None,
        )
        hits.append(GraphListHit(scored_chunk(rows[chunk_id], score), contribution))
    return hits


def _remembered(embed: EmbedTexts) -> EmbedTexts:
    """`embed`, computing each name's vector once however many bases ask for it."""
    vectors: dict[str, list[float]] = {}
    lock = Lock()

    def remembered(names: Sequence[str]) -> list[list[float]]:
        with lock:
            new = [name for name in dict.fromkeys(names) if name not in vectors]
            if new:
                vectors.update(zip(new, embed(new), strict=True))
            return [vectors[name] for name in names]

    return remembered


def rank_in_graph(store: GraphStore, settings: SearchSettings, query: GraphQuery) -> GraphRanking:
    """Ranked chunk ids of every base in scope (bases in parallel), not yet checked for
    visibility: no database session is needed, so it can run beside the other searches.

    Raises GraphStoreError when the graph cannot be read, EmbeddingError when the question's
    names cannot be embedded; callers decide how to degrade.
    """
    if not query.kb_ids:
        return GraphRanking()
    if len(query.kb_ids) == 1:
        per_base = [_rank_base(store, settings, query, query.kb_ids[0])]
    else:
        if query.embed_names is not None:
            query = replace(query, embed_names=_remembered(query.embed_names))
        workers = min(len(query.kb_ids), settings.graph.parallel_bases)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            per_base = list(
                pool.map(lambda kb_id: _rank_base(store, settings, query, kb_id), query.kb_ids)
            )
    return GraphRanking(
        evidence=sorted(
            (item for base in per_base for item in base.evidence),
            key=lambda item: (-item.score, item.chunk_id),
        ),
        seeds=sorted({seed for base in per_base for seed in base.seeds}),
        truncated=any(base.truncated for base in per_base),
        read_ms=max(base.read_ms for base in per_base),
        rank_ms=sum(base.rank_ms for base in per_base),
        unsearchable_vectors=sum(base.unsearchable_vectors for base in per_base),
    )


def visible_graph_hits(
    session: Session,
    ranking: GraphRanking,
    query: GraphQuery,
    settings: SearchSettings,
    query_vector: Sequence[float] | None = None,
) -> GraphRanking:
    """The ranking with its graph list loaded: visible chunks only, ordered with the question's
    vector when there is one (see `_graph_list_score`)."""
    ranking.hits = _load_visible(session, ranking.evidence, query, settings, query_vector)
    return ranking


def find_graph_hits(
    session: Session,
    store: GraphStore,
    settings: SearchSettings,
    query: GraphQuery,
    query_vector: Sequence[float] | None = None,
) -> GraphRanking:
    """Visible chunks of the bases ranked by their graph evidence for the question, best first."""
    ranking = rank_in_graph(store, settings, query)
    return visible_graph_hits(session, ranking, query, settings, query_vector)
