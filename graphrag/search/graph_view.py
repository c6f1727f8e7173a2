"""The console's graph view: graph-search with one node per entity of the base.

The store keeps one node per (name, document), each linked to the base node of its name key
(`graph.names.name_key`). Drawn as they are, an entity named in three documents is three nodes.
Here the nodes of one resolved entity (`graph.resolution`: aliases such as "A. Moreau" and "Ada
Moreau" joined, homonyms kept apart) become one node listing the documents that name it; a node
not resolved yet is grouped with the others of its name key. The relations
of one type between the same two entities become one edge with a count. A name without a key
(no letter or digit) stays a node of its own. A document filter in the request still reads that
document's nodes only, so the view then shows that document's entities.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from graphrag.graph.search_models import EntityPublic, GraphSearchRequest, GraphSearchResponse
from graphrag.graph.view_models import GraphViewResponse, ViewDocument, ViewEdge, ViewNode
from graphrag.search.graph_search import GraphRead, read_graph

__all__ = ["merge_instances", "view_graph"]


@dataclass
class _Node:
    """A view node being gathered; dicts keep first-seen order without repeats."""

    id: str
    key: str
    name: str
    matched: bool = False
    names: dict[str, None] = field(default_factory=dict)
    attributes: dict[str, None] = field(default_factory=dict)
    documents: dict[str, tuple[dict[str, None], dict[str, None]]] = field(default_factory=dict)

    def add(self, entity: EntityPublic) -> None:
        self.matched = self.matched or entity.matched
        self.names[entity.name] = None
        self.attributes.update(dict.fromkeys(entity.attributes))
        ids, chunks = self.documents.setdefault(entity.knowledge_id, ({}, {}))
        ids[entity.id] = None
        chunks.update(dict.fromkeys(entity.chunks))

    def public(self, file_names: Mapping[str, str]) -> ViewNode:
        return ViewNode(
            id=self.id,
            key=self.key,
            name=self.name,
            names=list(self.names),
            attributes=list(self.attributes),
            matched=self.matched,
            documents=[
                ViewDocument(
                    knowledge_id=kg,
                    file_name=file_names.get(kg, kg),
                    entity_ids=list(ids),
                    chunks=list(chunks),
                )
                for kg, (ids, chunks) in self.documents.items()
            ],
        )


def merge_instances(
    answer: GraphSearchResponse, keys: Mapping[str, str], file_names: Mapping[str, str]
) -> GraphViewResponse:
    """One node per base entity key and one edge per (source, type, target) of the merged nodes.

    `keys` maps an entity id to its base entity key (a missing or empty key keeps the entity
    apart); `file_names` maps a knowledge id to its file name (the id stands in when missing).
    Order follows the answer: a node is placed, and named, by its best ranked document node.
    """
    groups: dict[tuple[str, str], _Node] = {}
    node_of: dict[str, str] = {}
    for entity in answer.entities:
        key = keys.get(entity.id, "")
        if entity.resolved_id:
            group = ("resolved", entity.resolved_id)
        else:
            group = ("key", key) if key else ("entity", entity.id)
        node = groups.setdefault(group, _Node(id=entity.id, key=key, name=entity.name))
        node.add(entity)
        node_of[entity.id] = node.id
    edges: dict[tuple[str, str, str], tuple[list[str], dict[str, None]]] = {}
    for relation in answer.relations:
        # graph-search lists both ends of every relation it returns
        edge = (node_of[relation.source], relation.type, node_of[relation.target])
        ids, chunks = edges.setdefault(edge, ([], {}))
        ids.append(relation.id)
        chunks.update(dict.fromkeys(relation.chunks))
    return GraphViewResponse(
        nodes=[node.public(file_names) for node in groups.values()],
        edges=[
            ViewEdge(
                id=ids[0],
                source=source,
                target=target,
                type=type_,
                count=len(ids),
                relation_ids=ids,
                chunks=list(chunks),
            )
            for (source, type_, target), (ids, chunks) in edges.items()
        ],
        sources=answer.sources,
        truncated=answer.truncated,
    )


def view_graph(read: GraphRead, request: GraphSearchRequest) -> GraphViewResponse:
    """Graph-search's answer to `request`, merged per entity of the base (`merge_instances`).

    Same bounds and errors as `graph_search.search_graph`.
    """
    answer = read_graph(read, request)
    return merge_instances(answer.response, answer.keys, answer.file_names)
