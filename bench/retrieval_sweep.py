"""Fusion settings compared on the same per-method lists: where the fusion defaults come from.

For each question the vector list, the keyword list (both matching modes) and each graph
ranker's list are read once; every combination of RRF k and weights is then fused offline with
the real `fuse` and scored like the main table. Only ranks change between combinations, so the
sweep costs one retrieval per method and question, whatever the grid.
"""

from __future__ import annotations

import itertools
import statistics
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from graphrag.graph.store import GraphStore
from graphrag.search.embeddings import Embedder
from graphrag.search.fusion import FusionWeights, GraphListHit, fuse
from graphrag.search.graph_retrieval import GraphQuery, find_graph_hits
from graphrag.search.models import KbScope, RetrievalRequest, ScoredChunk, SearchHit
from graphrag.search.passages import join_neighbours
from graphrag.search.retrieval import retrieve, seed_passages
from graphrag.settings import Settings

__all__ = ["QuestionLists", "read_lists", "sweep"]

RRF_KS = (10, 30, 60)
VECTOR_WEIGHTS = (0.7, 1.0)
KEYWORD_WEIGHTS = (0.0, 0.3, 0.7, 1.0)
GRAPH_WEIGHTS = (0.0, 1.0, 2.0, 3.0, 4.0)
KEYWORD_MODES = ("any", "all")
RANKERS = ("ppr", "entity_overlap")
SHOWN = 12


@dataclass(frozen=True)
class QuestionLists:
    gold: frozenset[str]
    vector: list[ScoredChunk]
    keyword: dict[str, list[ScoredChunk]]
    graph: dict[str, list[GraphListHit]]


def _scored(hits: Sequence[SearchHit]) -> list[ScoredChunk]:
    fields = set(ScoredChunk.model_fields) - {"score"}
    return [ScoredChunk(**hit.model_dump(include=fields), score=hit.score) for hit in hits]


def read_lists(
    settings: Settings,
    sessions: sessionmaker[Session],
    embedder: Embedder,
    store: GraphStore,
    scope: KbScope,
    question: dict[str, object],
    fetch_k: int,
) -> QuestionLists:
    """Every method's own list for one question (graph lists seeded as `/search` seeds them)."""
    text = str(question["question"])
    search = settings.search

    def one(use_vector: bool, mode: str) -> list[ScoredChunk]:
        request = RetrievalRequest(
            query=text,
            scopes=[scope],
            top_k=fetch_k,
            vector_threshold=search.vector_threshold,
            keyword_threshold=search.keyword_threshold,
            use_vector=use_vector,
            use_keyword=not use_vector,
            use_graph=False,
        )
        variant = search.model_copy(update={"keyword_match": mode})
        with sessions() as session:
            return _scored(retrieve(session, embedder, variant, request).hits)

    vector = one(True, search.keyword_match)
    keyword = {mode: one(False, mode) for mode in KEYWORD_MODES}
    graph: dict[str, list[GraphListHit]] = {}
    probe = GraphQuery(question=text, kb_ids=[scope.kb_id])
    question_vector = embedder.embed_query(text)
    # The graph walk starts at the best passages of the default fusion (as `retrieve` does);
    # the sweep then varies only how the three lists are fused.
    weights = FusionWeights(
        k=search.rrf_k, vector=search.vector_weight, keyword=search.keyword_weight
    )
    hybrid = fuse(vector, keyword[search.keyword_match], weights)
    with sessions() as session:
        passages = seed_passages(session, hybrid, probe, search)
    for ranker in RANKERS:
        variant = search.model_copy(
            update={"graph": search.graph.model_copy(update={"ranker": ranker})}
        )
        query = GraphQuery(
            question=text, kb_ids=[scope.kb_id], embed_names=embedder.embed, passages=passages
        )
        with sessions() as session:
            graph[ranker] = find_graph_hits(session, store, variant, query, question_vector).hits
    return QuestionLists(
        gold=frozenset(str(g) for g in question["gold"]),  # type: ignore[attr-defined]
        vector=vector,
        keyword=keyword,
        graph=graph,
    )


def _metrics(
    lists: Sequence[QuestionLists],
    paragraph: dict[uuid.UUID, str],
    overlap: int,
    ranked: Callable[[QuestionLists], list[SearchHit]],
) -> tuple[float, float, float]:
    r2, r5, rr = [], [], []
    for q in lists:
        ids = [
            paragraph.get(p.hits[0].knowledge_id, "") for p in join_neighbours(ranked(q), overlap)
        ]
        r2.append(len(q.gold & set(ids[:2])) / len(q.gold))
        r5.append(len(q.gold & set(ids[:5])) / len(q.gold))
        first = next((i for i, pid in enumerate(ids, start=1) if pid in q.gold), None)
        rr.append(1.0 / first if first else 0.0)
    return statistics.fmean(r2), statistics.fmean(r5), statistics.fmean(rr)


def sweep(lists: Sequence[QuestionLists], paragraph: dict[uuid.UUID, str], overlap: int) -> None:
    """Print the best combinations by R@5 (then MRR), and the no-graph baseline of each."""
    rows = []
    for k, wv, wk, wg, mode, ranker in itertools.product(
        RRF_KS, VECTOR_WEIGHTS, KEYWORD_WEIGHTS, GRAPH_WEIGHTS, KEYWORD_MODES, RANKERS
    ):
        weights = FusionWeights(k=k, vector=wv, keyword=wk, graph=wg)

        def ranked(
            q: QuestionLists, w: FusionWeights = weights, m: str = mode, r: str = ranker
        ) -> list[SearchHit]:
            graph = q.graph[r] if w.graph > 0 else []
            return fuse(q.vector, q.keyword[m] if w.keyword > 0 else [], w, graph)

        r2, r5, mrr = _metrics(lists, paragraph, overlap, ranked)
        rows.append((r5, mrr, r2, k, wv, wk, wg, mode, ranker))
    rows.sort(reverse=True)
    print("\n# sweep: best fusion settings by R@5, then MRR")
    print("| R@5 | MRR | R@2 | k | vector | keyword | graph | keyword match | ranker |")
    print("|---|---|---|---|---|---|---|---|---|")
    no_graph = [r for r in rows if r[6] == 0.0]
    for row in [*rows[:SHOWN], no_graph[0]]:
        r5, mrr, r2, k, wv, wk, wg, mode, ranker = row
        shown_ranker = ranker if wg > 0 else "-"
        print(
            f"| {r5:.3f} | {mrr:.3f} | {r2:.3f} | {k} | {wv} | {wk} | {wg} | {mode} |"
            f" {shown_ranker} |"
        )
