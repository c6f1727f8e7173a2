"""`query_knowledge_graph`: the agent's tool that really reads the knowledge graph.

For each graph-enabled base in scope it runs SearchNode (entities whose name contains one of
the given names, their neighbours and relations), then loads the visible chunks those entities
were read from. Entities and relations whose every source chunk is gone (deleted, disabled,
re-parsed) are left out. A base without a graph, or whose graph cannot be read right now, is
searched with plain hybrid search instead, and the output says so for each base.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from graphrag.chat.agent_evidence import Evidence
from graphrag.chat.agent_tools import ToolName, ToolResult, hybrid_hits
from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.db.engine import session_scope
from graphrag.errors import GraphStoreError
from graphrag.graph.search_models import GraphSearchResult
from graphrag.search.graph_complement import graph_chunk_ids, load_graph_hits
from graphrag.search.models import KbScope, SearchHit

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
    """What the graph bases gave, merged: entity lines, relation lines, chunks in order."""

    entities: dict[str, list[str]] = field(default_factory=dict)  # name -> attributes
    relations: dict[tuple[str, str, str], None] = field(default_factory=dict)
    hits: list[SearchHit] = field(default_factory=list)
    truncated: bool = False


def _kept(
    result: GraphSearchResult, visible: set[str]
) -> tuple[list[tuple[str, list[str]]], list[tuple[str, str, str]]]:
    """Entities (seeds first) with a visible source chunk, and relations between kept ones."""
    seeds = set(result.seed_ids)
    ordered = [n for n in result.nodes if n.id in seeds] + [
        n for n in result.nodes if n.id not in seeds
    ]
    nodes = {n.id: n for n in ordered if visible.intersection(n.chunks)}
    relations = [
        (nodes[r.source].name, r.type, nodes[r.target].name)
        for r in result.relations
        if r.source in nodes and r.target in nodes and visible.intersection(r.chunks)
    ]
    return [(n.name, n.attributes) for n in nodes.values()], relations


class GraphQueryTool:
    """Offered only when the scope holds a graph-enabled base and the request allows the graph."""

    name = ToolName.QUERY_KNOWLEDGE_GRAPH.value
    arguments_model = GraphQueryArgs

    def __init__(self, services: ChatServices, turn: ChatTurn, description: str) -> None:
        self._services = services
        self._turn = turn
        self.description = description

    def _search_graph(self, scope: KbScope, names: list[str], found: _Found) -> dict[str, Any]:
        """SearchNode in one base, then its visible chunks; the base's state for the output."""
        knowledge_ids = self._turn.request.knowledge_ids
        result = self._services.graph.search_nodes(scope.kb_id, names, knowledge_ids)
        with session_scope(self._services.sessions) as session:
            hits = load_graph_hits(session, graph_chunk_ids(result), [scope.kb_id], knowledge_ids)
        entities, relations = _kept(result, {str(hit.chunk_id) for hit in hits})
        for name, attributes in entities:
            merged = found.entities.setdefault(name, [])
            merged.extend(a for a in attributes if a not in merged)
        for relation in relations:
            found.relations.setdefault(relation, None)
        found.hits.extend(hits)
        found.truncated = found.truncated or result.truncated
        return {
            "kb_id": str(scope.kb_id),
            "state": KbGraphState.GRAPH_SEARCHED.value,
            "entities": len(entities),
            "relations": len(relations),
            "truncated": result.truncated,
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
            except GraphStoreError as exc:
                state = KbGraphState.GRAPH_UNAVAILABLE_HYBRID_SEARCH.value
                states.append({"kb_id": kb_id, "state": state, "reason": exc.message})
                fallback.append(scope)
        hits = found.hits[: chat.graph_max_chunks]
        if fallback and names:
            hits += hybrid_hits(self._services, self._turn, ", ".join(names), fallback)
        passages = evidence.add(hits)
        entities = list(found.entities.items())[: chat.agent_graph_max_items]
        relations = list(found.relations)[: chat.agent_graph_max_items]
        output = {
            "knowledge_bases": states,
            "entities": [{"name": n, "attributes": a} for n, a in entities],
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
                "entities": [n for n, _ in entities],
                "relations": [list(r) for r in relations],
                "knowledge_bases": states,
                "passages": [p["n"] for p in passages],
            },
        )
