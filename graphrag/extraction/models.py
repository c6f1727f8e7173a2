"""The graph a model extracts from one chunk, and a knowledge base's extraction config.

Names are whitespace-normalised on the way in (a model's "Marie\\n Curie" and "Marie Curie" are the
same entity); length caps come from `ExtractionSettings` and are checked by
`check_extract_config` (user input) and by the output parser (model output).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from graphrag.errors import InvalidInputError
from graphrag.settings import ExtractionSettings
from graphrag.text_input import InputText, check_text

__all__ = [
    "ExtractConfig",
    "GraphData",
    "GraphNode",
    "GraphRelation",
    "check_extract_config",
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


def _clean_texts(values: list[str]) -> list[str]:
    """Whitespace-normalised, empty ones dropped, duplicates dropped, first occurrence's order."""
    seen: dict[str, None] = {}
    for value in values:
        text = normalize_space(value)
        if text:
            seen.setdefault(text, None)
    return list(seen)


Name = Annotated[str, AfterValidator(_non_empty_name)]
TextList = Annotated[list[str], AfterValidator(_clean_texts)]
# The same for request input (a base's extraction config): NUL and lone surrogates refused.
InputTextList = Annotated[list[InputText], AfterValidator(_clean_texts)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GraphNode(_Frozen):
    """An entity: its name (the merge key in a document), what is said of it, where it was read."""

    name: Name
    attributes: TextList = Field(default_factory=list)
    chunks: list[str] = Field(default_factory=list)


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

    def with_chunk(self, chunk_id: str) -> GraphData:
        """The same graph with every node pointing at the chunk it was read from."""
        nodes = [node.model_copy(update={"chunks": [chunk_id]}) for node in self.nodes]
        return self.model_copy(update={"nodes": nodes})


class ExtractConfig(_Frozen):
    """A knowledge base's extraction setup: switch, relation labels, few-shot example, guidance.

    `custom_instructions` are appended to the system prompt; the output protocol itself stays under
    the system's control.
    """

    enabled: bool = False
    text: InputText = ""
    tags: InputTextList = Field(default_factory=list)
    nodes: list[GraphNode] = Field(default_factory=list)
    relations: list[GraphRelation] = Field(default_factory=list)
    custom_instructions: InputText = ""

    @field_validator("text", "custom_instructions")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()

    @model_validator(mode="after")
    def _storable_example(self) -> ExtractConfig:
        # The example's nodes and relations share their model with extraction output (which
        # settles bad text itself), so their text is checked here, as `InputText` would.
        for node in self.nodes:
            for text in (node.name, *node.attributes, *node.chunks):
                check_text(text)
        for relation in self.relations:
            for text in (relation.node1, relation.node2, relation.type):
                check_text(text)
        return self

    @property
    def has_example(self) -> bool:
        """Whether the few-shot example is usable: a text and something extracted from it."""
        return bool(self.text) and bool(self.nodes or self.relations)


def check_extract_config(config: ExtractConfig, limits: ExtractionSettings) -> None:
    """Raise `InvalidInputError` when `config` exceeds a cap of `limits`."""
    problems: list[str] = []
    if len(config.tags) > limits.max_tags:
        problems.append(f"at most {limits.max_tags} tags")
    if len(config.text) > limits.max_example_text_chars:
        problems.append(f"example text of at most {limits.max_example_text_chars} characters")
    if len(config.custom_instructions) > limits.max_custom_instructions_chars:
        problems.append(
            f"custom instructions of at most {limits.max_custom_instructions_chars} characters"
        )
    if len(config.nodes) > limits.max_nodes_per_chunk:
        problems.append(f"at most {limits.max_nodes_per_chunk} example nodes")
    if len(config.relations) > limits.max_relations_per_chunk:
        problems.append(f"at most {limits.max_relations_per_chunk} example relations")
    names = [node.name for node in config.nodes] + [
        name for rel in config.relations for name in (rel.node1, rel.node2, rel.type)
    ]
    names += config.tags
    if any(len(name) > limits.max_name_chars for name in names):
        problems.append(f"names and tags of at most {limits.max_name_chars} characters")
    if problems:
        raise InvalidInputError("extract config exceeds its limits: " + "; ".join(problems))
