"""`query_knowledge_graph`: the agent's tool that really reads the knowledge graph.

For each graph-enabled base in scope it ranks chunks through the graph for the given names
(`search.graph_retrieval`, the same path as `/search` and the knowledge chat) and lists the
entities and relations that led to the visible ones. A base without a graph, or whose graph
cannot be read right now, is searched with plain hybrid search instead, and the output says so
for each base.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from graphrag.chat.agent_evidence import Evidence
from graphrag.chat.agent_tools import ToolName, ToolResult, TurnTool, hybrid_hits
from graphrag.db.engine import session_scope
from graphrag.errors import EmbeddingError, GraphStoreError
from graphrag.search.graph_retrieval import GraphQuery, find_graph_hits
from graphrag.search.models import KbScope, MatchType, SearchHit

__all__ = ["GraphQueryArgs", "GraphQueryTool", "KbGraphState"]


class KbGraphState(StrEnum):
    """How one base in scope was searched."""

    GRAPH_SEARCHED = "graph_searched"
    NO_GRAPH_HYBRID_SEARCH = "no_graph_hybrid_search"
    GRAPH_UNAVAILABLE_HYBRID_SEARCH = "graph_unavailable_hybrid_search"


class GraphQueryArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    entities: list[str] = Field(
        min_length=1, description="Entity names to look up, as written in the question."
    )


@dataclass
class _Found:
    """What the graph bases gave, merged: entity names, relation triples, chunks in order."""

    entities: dict[str, None] = field(default_factory=dict)
    relations: dict[tuple[str, str, str], None] = field(default_factory=dict)
    hits: list[SearchHit] = field(default_factory=list)
    truncated: bool = False


class GraphQueryTool(TurnTool):
    """Offered only when the scope holds a graph-enabled base and the request allows the graph."""

    name = ToolName.QUERY_KNOWLEDGE_GRAPH.value
    arguments_model = GraphQueryArgs

    def _search_graph(self, scope: KbScope, names: list[str], found: _Found) -> dict[str, Any]:
        """Graph ranking in one base; the entities and relations behind its visible chunks."""
        services = self._services
        question = " ; ".join(names)
        question_vector = services.embedder.embed_query(question)
        query = GraphQuery(
            question=question,
            kb_ids=[scope.kb_id],
            entities=names,
            knowledge_ids=self._turn.request.knowledge_ids,
            embed_names=services.embedder.embed,
        )
        with session_scope(services.sessions) as session:
            ranking = find_graph_hits(
                session, services.graph, services.settings.search, query, question_vector
            )
        relations = 0
        for item in ranking.hits:
            path = item.contribution.path
            for name in (*item.contribution.seeds, *path[::2]):
                found.entities.setdefault(name, None)
            if len(path) == 3:
                relations += (path[0], path[1], path[2]) not in found.relations
                found.relations.setdefault((path[0], path[1], path[2]), None)
            found.hits.append(
                SearchHit(
                    **item.chunk.model_dump(exclude={"score"}),
                    score=item.contribution.score,
                    rank=len(found.hits) + 1,
                    match_type=MatchType.GRAPH,
                    graph=item.contribution,
                )
            )
        found.truncated = found.truncated or ranking.truncated
        return {
            "kb_id": str(scope.kb_id),
            "state": KbGraphState.GRAPH_SEARCHED.value,
            "entities": len(ranking.seeds),
            "relations": relations,
            "truncated": ranking.truncated,
        }

    def run(self, arguments: dict[str, Any], evidence: Evidence) -> ToolResult:
        """Entities, relations and passages from the graph bases; hybrid search elsewhere."""
        args = GraphQueryArgs.model_validate(arguments)
        names = [name.strip() for name in args.entities if name.strip()]
        chat = self._services.settings.chat
        found = _Found()
        states: list[dict[str, Any]] = []
        fallback: list[KbScope] = []
        for scope in self._turn.scopes:
            kb_id = str(scope.kb_id)
            if not (scope.graph_on and self._turn.request.use_graph):
                states.append({"kb_id": kb_id, "state": KbGraphState.NO_GRAPH_HYBRID_SEARCH.value})
                fallback.append(scope)
                continue
            try:
                states.append(self._search_graph(scope, names, found))
            except (GraphStoreError, EmbeddingError) as exc:
                state = KbGraphState.GRAPH_UNAVAILABLE_HYBRID_SEARCH.value
                states.append({"kb_id": kb_id, "state": state, "reason": exc.message})
                fallback.append(scope)
        self._turn.graph_truncated = self._turn.graph_truncated or found.truncated
        hits = found.hits[: chat.top_k]
        if fallback and names:
            hits += hybrid_hits(self._services, self._turn, ", ".join(names), fallback)
        passages = evidence.add(hits)
        entities = list(found.entities)[: chat.agent_graph_max_items]
        relations = list(found.relations)[: chat.agent_graph_max_items]
        output = {
            "knowledge_bases": states,
            "entities": [{"name": n} for n in entities],
            "relations": [{"source": s, "type": t, "target": o} for s, t, o in relations],
            "passages": passages,
            "truncated": found.truncated
            or len(found.entities) > len(entities)
            or len(found.relations) > len(relations),
        }
        return ToolResult(
            output=output,
            summary=(
                f"{len(entities)} entities, {len(relations)} relations, {len(passages)} passages"
                f" ({', '.join(state['state'] for state in states)})"
            ),
            detail={
                "entities": entities,
                "relations": [list(r) for r in relations],
                "knowledge_bases": states,
                "passages": [p["n"] for p in passages],
            },
        )
