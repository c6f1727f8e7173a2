"""Turn a raw extracted graph into clean `GraphData`.

Rules, in order:
- names and types are whitespace-normalised; empty names, and names longer than the cap (a copied
  sentence, not an entity) are dropped;
- nodes with the same name up to case are one node: the first spelling wins, attributes are
  united in order of appearance, then cut to the per-node cap;
- relation ends given as node ids are mapped to the node names;
- a relation with an empty end or type, or from a node to itself, is dropped;
- with tags, a relation type matching a tag (ignoring case, `_` and `-`) takes the tag's
  spelling; any other type is kept or dropped by `keep_relations_outside_tags`;
- a relation repeated (same ends up to case, same type) is kept once;
- a relation end missing from the nodes becomes a node without attributes;
- then the node cap applies (relations losing an end go with it), then the relation cap.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from graphrag.extraction.output_shapes import RawGraph, RawRelation
from graphrag.graph.models import GraphData, GraphNode, GraphRelation, normalize_space
from graphrag.settings import ExtractionSettings

__all__ = ["CleanedGraph", "ParseOptions", "clean_graph"]

_TYPE_SEPARATORS = re.compile(r"[_\-]+")


class ParseOptions(BaseModel):
    """How a model's graph is cleaned: the KB's tags and the caps of `ExtractionSettings`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tags: list[str] = Field(default_factory=list)
    keep_relations_outside_tags: bool
    max_name_chars: int = Field(gt=0)
    max_attributes_per_node: int = Field(ge=0)
    max_nodes_per_chunk: int = Field(gt=0)
    max_relations_per_chunk: int = Field(ge=0)

    @classmethod
    def from_settings(cls, settings: ExtractionSettings, tags: Sequence[str]) -> ParseOptions:
        """Options for a knowledge base whose extract config has `tags`."""
        return cls(
            tags=list(tags),
            keep_relations_outside_tags=settings.keep_relations_outside_tags,
            max_name_chars=settings.max_name_chars,
            max_attributes_per_node=settings.max_attributes_per_node,
            max_nodes_per_chunk=settings.max_nodes_per_chunk,
            max_relations_per_chunk=settings.max_relations_per_chunk,
        )


class CleanedGraph(BaseModel):
    """The clean graph and how many raw nodes and relations did not make it."""

    model_config = ConfigDict(frozen=True)

    data: GraphData
    dropped_nodes: int = 0
    dropped_relations: int = 0


def _tag_key(text: str) -> str:
    return normalize_space(_TYPE_SEPARATORS.sub(" ", text)).casefold()


class _Cleaner:
    """Accumulates nodes (keyed by case-folded name) and relations while counting the drops."""

    def __init__(self, options: ParseOptions) -> None:
        self.options = options
        self.tags = {_tag_key(tag): tag for tag in options.tags}
        self.nodes: dict[str, tuple[str, list[str]]] = {}
        self.relations: dict[tuple[str, str, str], GraphRelation] = {}
        self.refs: dict[str, str] = {}
        self.dropped_nodes = 0
        self.dropped_relations = 0

    def valid_name(self, raw: str) -> str | None:
        name = normalize_space(raw)
        return name if 0 < len(name) <= self.options.max_name_chars else None

    def add_node(self, name: str, attributes: Sequence[str]) -> str:
        """Store the node (merging same-name ones); return its canonical spelling."""
        key = name.casefold()
        if key not in self.nodes:
            self.nodes[key] = (name, [])
        canonical, stored = self.nodes[key]
        for attribute in attributes:
            text = normalize_space(attribute)
            if text and text not in stored:
                stored.append(text)
        return canonical

    def relation_type(self, raw: str) -> str | None:
        kind = normalize_space(raw)
        if not kind or len(kind) > self.options.max_name_chars:
            return None
        if not self.tags:
            return kind
        tag = self.tags.get(_tag_key(kind))
        if tag is not None:
            return tag
        return kind if self.options.keep_relations_outside_tags else None

    def add_relation(self, raw: RawRelation) -> None:
        ends = [self.valid_name(self.refs.get(end.strip(), end)) for end in (raw.node1, raw.node2)]
        kind = self.relation_type(raw.type)
        node1, node2 = ends
        if node1 is None or node2 is None or kind is None or node1.casefold() == node2.casefold():
            self.dropped_relations += 1
            return
        key = (node1.casefold(), node2.casefold(), _tag_key(kind))
        if key in self.relations:
            return
        node1, node2 = self.add_node(node1, ()), self.add_node(node2, ())
        self.relations[key] = GraphRelation(node1=node1, node2=node2, type=kind)

    def result(self) -> CleanedGraph:
        options = self.options
        kept = list(self.nodes.items())[: options.max_nodes_per_chunk]
        self.dropped_nodes += len(self.nodes) - len(kept)
        kept_keys = {key for key, _ in kept}
        relations = [
            relation
            for (key1, key2, _), relation in self.relations.items()
            if key1 in kept_keys and key2 in kept_keys
        ]
        capped = relations[: options.max_relations_per_chunk]
        self.dropped_relations += len(self.relations) - len(capped)
        nodes = [
            GraphNode(name=name, attributes=attributes[: options.max_attributes_per_node])
            for _, (name, attributes) in kept
        ]
        return CleanedGraph(
            data=GraphData(nodes=nodes, relations=capped),
            dropped_nodes=self.dropped_nodes,
            dropped_relations=self.dropped_relations,
        )


def clean_graph(raw: RawGraph, options: ParseOptions) -> CleanedGraph:
    """Apply the module's rules to `raw`; the result's order is the order of first appearance."""
    cleaner = _Cleaner(options)
    for node in raw.nodes:
        name = cleaner.valid_name(node.name)
        if name is None:
            cleaner.dropped_nodes += 1
            continue
        canonical = cleaner.add_node(name, node.attributes)
        if node.ref is not None:
            cleaner.refs.setdefault(node.ref.strip(), canonical)
    for relation in raw.relations:
        cleaner.add_relation(relation)
    return cleaner.result()
