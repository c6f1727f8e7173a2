"""A knowledge base's extraction config: the switch, relation labels, few-shot example, guidance.

Length caps come from `ExtractionSettings` and are checked by `check_extract_config` (user
input); the output parser checks model output against the same caps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field, field_validator, model_validator

from graphrag.errors import InvalidInputError
from graphrag.graph.models import GraphNode, GraphRelation, clean_texts
from graphrag.settings import ExtractionSettings
from graphrag.text_input import Bounded, InputText, RequestModel, check_text

__all__ = ["ExtractConfig", "InputTextList", "check_example_texts", "check_extract_config"]

# Labels of request input: cleaned like model output, NUL and lone surrogates refused.
InputTextList = Annotated[list[InputText], AfterValidator(clean_texts)]


class ExtractConfig(RequestModel):
    """A knowledge base's extraction setup: switch, relation labels, few-shot example, guidance.

    `custom_instructions` are appended to the system prompt; the output protocol itself stays under
    the system's control.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = False
    text: InputText = ""
    tags: Annotated[InputTextList, Bounded("extraction.max_tags")] = Field(default_factory=list)
    nodes: Annotated[list[GraphNode], Bounded("extraction.max_nodes_per_chunk")] = Field(
        default_factory=list
    )
    relations: Annotated[list[GraphRelation], Bounded("extraction.max_relations_per_chunk")] = (
        Field(default_factory=list)
    )
    custom_instructions: InputText = ""

    @field_validator("text", "custom_instructions")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()

    @model_validator(mode="after")
    def _storable_example(self) -> ExtractConfig:
        check_example_texts(self.nodes, self.relations)
        return self

    @property
    def has_example(self) -> bool:
        """Whether the few-shot example is usable: a text and something extracted from it."""
        return bool(self.text) and bool(self.nodes or self.relations)


def check_example_texts(nodes: Sequence[GraphNode], relations: Sequence[GraphRelation]) -> None:
    """Check a few-shot example's texts as `InputText` would: its nodes and relations share
    their model with extraction output (which settles bad text itself)."""
    for node in nodes:
        for text in (node.name, *node.attributes):
            check_text(text)
    for relation in relations:
        for text in (relation.node1, relation.node2, relation.type):
            check_text(text)


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
