"""Turn a raw extracted graph into clean `GraphData`.

Rules, in order:
- names and types are whitespace-normalised; empty names, names without a letter or digit, names
  longer than the cap (a copied sentence, not an entity) and placeholders (`name_guard`: a schema
  word, or a prompt example's name the chunk does not contain) are dropped;
- nodes with the same name up to case are one node: the first spelling wins, attributes are
  united in order of appearance, then cut to the per-node cap;
- relation ends given as node ids are mapped to the node names;
- when the answer lists entities, a relation whose end is not a kept node (missing from the list,
  a placeholder, no name) is dropped; an answer of relations only (triples) names its entities
  through their ends, which become nodes without attributes when they pass the name checks;
- a relation with an empty type, or from a node to itself, is dropped;
- with tags, a relation type matching a tag (ignoring case, `_` and `-`) takes the tag's
  spelling; any other type is kept or dropped by `keep_relations_outside_tags`;
- a relation repeated (same ends up to case, same type) is kept once;
- then the node cap applies (relations losing an end go with it), then the relation cap.
Every drop is counted under its reason (`drops`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from graphrag.extraction.drops import DropCounts, EntityDrop, RelationDrop
from graphrag.extraction.name_guard import NameGuard, has_word_char
from graphrag.extraction.output_shapes import RawGraph, RawRelation
from graphrag.graph.models import GraphData, GraphNode, GraphRelation, normalize_space
from graphrag.settings import ExtractionSettings
from graphrag.value_model import ValueModel

__all__ = ["CleanedGraph", "ParseOptions", "clean_graph"]

_TYPE_SEPARATORS = re.compile(r"[_\-]+")


class ParseOptions(BaseModel):
    """How a model's graph is cleaned: the KB's tags, the caps of `ExtractionSettings` and the
    placeholder names of the chunk."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tags: list[str] = Field(default_factory=list)
    keep_relations_outside_tags: bool
    max_name_chars: int = Field(gt=0)
    max_attributes_per_node: int = Field(ge=0)
    max_nodes_per_chunk: int = Field(gt=0)
    max_relations_per_chunk: int = Field(ge=0)
    guard: NameGuard = Field(default_factory=NameGuard)

    @classmethod
    def from_settings(
        cls,
        settings: ExtractionSettings,
        tags: Sequence[str],
        *,
        example_names: Sequence[str] = (),
        chunk_text: str = "",
    ) -> ParseOptions:
        """Options for a knowledge base whose extract config has `tags`, reading a chunk whose
        text is `chunk_text` under a prompt that shows `example_names`."""
        return cls(
            guard=NameGuard.for_chunk(settings.placeholder_names, example_names, chunk_text),
            tags=list(tags),
            keep_relations_outside_tags=settings.keep_relations_outside_tags,
            max_name_chars=settings.max_name_chars,
            max_attributes_per_node=settings.max_attributes_per_node,
            max_nodes_per_chunk=settings.max_nodes_per_chunk,
            max_relations_per_chunk=settings.max_relations_per_chunk,
        )


class CleanedGraph(ValueModel):
    """The clean graph and the raw nodes and relations that did not make it, per reason."""

    data: GraphData
    drops: DropCounts = Field(default_factory=DropCounts)

    @property
    def dropped_nodes(self) -> int:
        """Raw nodes left out, all reasons together."""
        return self.drops.dropped_entities

    @property
    def dropped_relations(self) -> int:
        """Raw relations left out, all reasons together."""
        return self.drops.dropped_relations


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
        self.entity_drops: Counter[EntityDrop] = Counter()
        self.relation_drops: Counter[RelationDrop] = Counter()

    def check_name(self, raw: str) -> str | EntityDrop:
        """The normalised name, or why it is no entity."""
        name = normalize_space(raw)
        if not has_word_char(name):
            return EntityDrop.NO_NAME
        if len(name) > self.options.max_name_chars:
            return EntityDrop.NAME_TOO_LONG
        if self.options.guard.is_placeholder(name):
            return EntityDrop.PLACEHOLDER
        return name

    def kept_node(self, raw: str, *, implicit: bool) -> str | None:
        """The canonical spelling of the node a relation end names: a kept node, or with
        `implicit` (an answer of relations only) a new node when the name passes the checks."""
        end = normalize_space(self.refs.get(raw.strip(), raw))
        stored = self.nodes.get(end.casefold())
        if stored is not None:
            return stored[0]
        if implicit and not isinstance(name := self.check_name(end), EntityDrop):
            return name
        return None

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

    def add_relation(self, raw: RawRelation, *, implicit: bool) -> None:
        node1 = self.kept_node(raw.node1, implicit=implicit)
        node2 = self.kept_node(raw.node2, implicit=implicit)
        kind = self.relation_type(raw.type)
        if node1 is None or node2 is None:
            self.relation_drops[RelationDrop.UNKNOWN_END] += 1
            return
        if kind is None:
            self.relation_drops[RelationDrop.BAD_TYPE] += 1
            return
        if node1.casefold() == node2.casefold():
            self.relation_drops[RelationDrop.SELF_LOOP] += 1
            return
        key = (node1.casefold(), node2.casefold(), _tag_key(kind))
        if key not in self.relations:
            node1, node2 = self.add_node(node1, ()), self.add_node(node2, ())
            self.relations[key] = GraphRelation(node1=node1, node2=node2, type=kind)

    def result(self) -> CleanedGraph:
        options = self.options
        kept = list(self.nodes.items())[: options.max_nodes_per_chunk]
        self.entity_drops[EntityDrop.OVER_CAP] += len(self.nodes) - len(kept)
        kept_keys = {key for key, _ in kept}
        relations = [
            relation
            for (key1, key2, _), relation in self.relations.items()
            if key1 in kept_keys and key2 in kept_keys
        ]
        capped = relations[: options.max_relations_per_chunk]
        self.relation_drops[RelationDrop.OVER_CAP] += len(self.relations) - len(capped)
        nodes = [
            GraphNode(name=name, attributes=attributes[: options.max_attributes_per_node])
            for _, (name, attributes) in kept
        ]
        return CleanedGraph(
            data=GraphData(nodes=nodes, relations=capped),
            drops=DropCounts.of(self.entity_drops, self.relation_drops),
        )


def clean_graph(raw: RawGraph, options: ParseOptions) -> CleanedGraph:
    """Apply the module's rules to `raw`; the result's order is the order of first appearance."""
    cleaner = _Cleaner(options)
    for node in raw.nodes:
        name = cleaner.check_name(node.name)
        if isinstance(name, EntityDrop):
            cleaner.entity_drops[name] += 1
            continue
        canonical = cleaner.add_node(name, node.attributes)
        if node.ref is not None:
            cleaner.refs.setdefault(node.ref.strip(), canonical)
    implicit = not raw.nodes
    for relation in raw.relations:
        cleaner.add_relation(relation, implicit=implicit)
    return cleaner.result()
