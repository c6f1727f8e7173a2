"""What the console's graph view draws: one node per entity of the base, not one per document.

Graph-search answers with the stored nodes, one per (name, document). The view joins the ones
that share a base entity key into one node that lists the documents naming it, and draws the
relations of one type between the same two entities as one edge with a count.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from graphrag.graph.search_models import SourceChunkPublic, TruncationPublic

__all__ = ["GraphViewResponse", "ViewDocument", "ViewEdge", "ViewNode"]


class ViewDocument(BaseModel):
    """A document that names the entity: its nodes there and the chunks they were read from."""

    knowledge_id: str
    file_name: str
    entity_ids: list[str] = Field(description="Graph-search entity ids of this document's nodes.")
    chunks: list[str]


class ViewNode(BaseModel):
    """One entity of the base; `id` is the id of its best ranked document node."""

    id: str
    key: str = Field(description="The base entity key; empty for a name without one.")
    name: str = Field(description="The name as its best ranked document node writes it.")
    names: list[str] = Field(description="Every way the documents write the name.")
    attributes: list[str]
    matched: bool = Field(description="False when only present as a relation's end.")
    documents: list[ViewDocument]


class ViewEdge(BaseModel):
    """Relations of one type from one entity to another, in any number of documents."""

    id: str
    source: str
    target: str
    type: str
    count: int = Field(description="Document relations this edge stands for.")
    relation_ids: list[str]
    chunks: list[str]


class GraphViewResponse(BaseModel):
    """A graph-search answer with the per-document nodes and relations merged per entity."""

    nodes: list[ViewNode]
    edges: list[ViewEdge]
    sources: list[SourceChunkPublic]
    truncated: TruncationPublic
