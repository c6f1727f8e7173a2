"""Recall from the archival memory: scored search, and the three-phase recall of a session start.

Session start (the user's first message):
1. identity: facts near `identity_query`, at most `identity_k`;
2. context: facts near the user's message, at most `context_k`;
3. graph: facts that mention the known entities named in the message, or the entities a memory
   search of the message reaches (name/description words, nearest facts, a bounded walk), or
   their neighbours in the memory graph, at most `graph_k`.
Each phase ranks its candidates by the composite score and skips facts an earlier phase took,
so the merged list has no duplicate. The facts returned are then touched once (last access and
access count); a plain search touches nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from enum import StrEnum

from graphrag.memory.context import MemoryContext
from graphrag.memory.records import MemoryOwner, ScoredFact, SimilarFact
from graphrag.memory.scoring import rank_facts
from graphrag.memory.subgraph import search_subgraph
from graphrag.value_model import ValueModel

__all__ = ["RecallPhase", "RecalledFact", "SessionRecall", "search_facts", "session_start_recall"]


class RecallPhase(StrEnum):
    IDENTITY = "identity"
    CONTEXT = "context"
    GRAPH = "graph"


class RecalledFact(ValueModel):
    """A fact recalled at session start and the phase that found it."""

    phase: RecallPhase
    scored: ScoredFact


class SessionRecall(ValueModel):
    """The facts recalled for a session's first message, and the entities it named."""

    facts: list[RecalledFact]
    entities: list[str]


def search_facts(ctx: MemoryContext, owner: MemoryOwner, query: str, k: int) -> list[ScoredFact]:
    """The owner's `k` best facts for `query` by composite score. Read-only."""
    vector = ctx.embedder.embed_query(query)
    candidates = ctx.archive.nearest(owner, vector, max(ctx.settings.rank_candidates, k))
    return rank_facts(
        candidates, ctx.clock(), ctx.settings, k, min_similarity=ctx.settings.min_similarity
    )


def _pick(
    ctx: MemoryContext,
    candidates: Sequence[SimilarFact],
    taken: Collection[str],
    k: int,
    now_ms: int,
    *,
    floor: bool,
) -> list[ScoredFact]:
    fresh = [c for c in candidates if str(c.fact.id) not in taken]
    minimum = ctx.settings.min_similarity if floor else None
    return rank_facts(fresh, now_ms, ctx.settings, k, min_similarity=minimum)


def session_start_recall(ctx: MemoryContext, owner: MemoryOwner, message: str) -> SessionRecall:
    """The three-phase recall for the first `message` of a session; touches what it returns."""
    settings = ctx.settings
    identity_vector, message_vector = ctx.embedder.embed([settings.identity_query, message])
    now = ctx.clock()
    pool = settings.rank_candidates
    recalled: list[RecalledFact] = []
    taken: set[str] = set()

    def keep(phase: RecallPhase, facts: list[ScoredFact]) -> None:
        for scored in facts:
            recalled.append(RecalledFact(phase=phase, scored=scored))
            taken.add(str(scored.fact.id))

    identity = ctx.archive.nearest(owner, identity_vector, pool)
    keep(RecallPhase.IDENTITY, _pick(ctx, identity, taken, settings.identity_k, now, floor=True))
    context = ctx.archive.nearest(owner, message_vector, pool)
    keep(RecallPhase.CONTEXT, _pick(ctx, context, taken, settings.context_k, now, floor=True))
    names = ctx.entities.known_names_in(owner, message)
    walked = search_subgraph(ctx, owner, message, vector=message_vector)
    reached = names + [e.name for e in walked.entities]
    linked = ctx.entities.facts_about(owner, reached, message_vector, pool)
    keep(RecallPhase.GRAPH, _pick(ctx, linked, taken, settings.graph_k, now, floor=False))
    ctx.archive.touch(owner, [r.scored.fact.id for r in recalled], now)
    return SessionRecall(facts=recalled, entities=names)
