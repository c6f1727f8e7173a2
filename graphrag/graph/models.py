"""The graph data every writer hands to the store: entities, relations, and the graph of one text.

Names are whitespace-normalised on the way in (a model's "Marie\\n Curie" and "Marie Curie" are the
same entity). Extraction (`graphrag.extraction`) and the agent memory produce these; the stores
write them.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field

from graphrag.graph.names import name_key
from graphrag.text_input import Bounded, RequestModel

__all__ = [
    "GraphData",
    "GraphNode",
    "GraphRelation",
    "Name",
    "TextList",
    "clean_texts",
    "normalize_space",
]


def normalize_space(text: str) -> str:
    """`text` with surrounding whitespace removed and inner runs of whitespace made one space."""
    return " ".join(text.split())


def _non_empty_name(value: str) -> str:
    name = normalize_space(value)
    if not name:
        raise ValueError("must not be empty or whitespace")
    return name


def clean_texts(values: list[str]) -> list[str]:
    """Whitespace-normalised, empty ones dropped, duplicates dropped, first occurrence's order."""
    seen: dict[str, None] = {}
    for value in values:
        text = normalize_space(value)
        if text:
            seen.setdefault(text, None)
    return list(seen)


# Within a request (a base's example graph), held to the request's caps (see `Bounded`).
_Text = Annotated[str, Bounded("api.max_text_field_chars")]
Name = Annotated[_Text, AfterValidator(_non_empty_name)]
TextList = Annotated[
    list[_Text], AfterValidator(clean_texts), Bounded("extraction.max_attributes_per_node")
]


class _Frozen(RequestModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GraphNode(_Frozen):
    """An entity: its name (the merge key in a document) and what is said of it.

    Where it was read is not part of it: the store records the chunk it writes the graph for.
    """

    name: Name
    attributes: TextList = Field(default_factory=list)


class GraphRelation(_Frozen):
    """A directed, typed link from the entity named `node1` to the one named `node2`."""

    node1: Name
    node2: Name
    type: Name


class GraphData(_Frozen):
    """The entities and relations read from one text."""

    nodes: list[GraphNode] = Field(default_factory=list)
    relations: list[GraphRelation] = Field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        """Whether nothing was extracted."""
        return not self.nodes and not self.relations

    def entity_keys(self) -> list[str]:
        """The name keys of the entities read in the text (a relation's endpoint that is not one
        of them was not read here), each once, in reading order."""
        keys = (name_key(node.name) for node in self.nodes)
        return list(dict.fromkeys(key for key in keys if key))
