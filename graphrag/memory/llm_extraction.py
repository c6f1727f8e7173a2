"""Optional LLM pass of the session close: entities and relations read from the transcript.

Every outcome is reported, never hidden: `disabled` (setting off or no LLM), `unavailable` (the
server failed: the deterministic facts are kept alone), `unparsed` (prose or an unknown shape),
`empty` (an empty answer), `ok` (a graph, possibly with no entity because none was worth it).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence

from graphrag.db.enums import MessageRole
from graphrag.errors import LlmUnavailableError
from graphrag.extraction.graph_cleanup import ParseOptions
from graphrag.extraction.output_parser import OutputKind, parse_graph_output
from graphrag.extraction.prompt_builder import graph_response_format
from graphrag.graph.models import GraphData
from graphrag.llm.client import LlmClient
from graphrag.llm.prompts import load_prompt
from graphrag.memory.recall_log import RecallEntry
from graphrag.memory.records import FactKind, LlmStatus, NewFact, SessionEntity, SessionRelation
from graphrag.memory.session_facts import clip
from graphrag.settings import ExtractionSettings, MemorySettings
from graphrag.value_model import ValueModel

__all__ = [
    "LlmExtraction",
    "extract_session_graph",
    "graph_entities",
    "graph_facts",
    "graph_relations",
    "transcript",
]

log = logging.getLogger(__name__)

_SPEAKERS = {
    MessageRole.USER: "User",
    MessageRole.ASSISTANT: "Assistant",
    MessageRole.TOOL: "Tool result",
}


class LlmExtraction(ValueModel):
    """What the LLM pass gave, and why it gave nothing when it did."""

    status: LlmStatus
    detail: str = ""
    graph: GraphData = GraphData()


def transcript(messages: Sequence[RecallEntry], max_chars: int) -> str:
    """The most recent whole messages that fit in `max_chars`, as `Speaker: text` lines."""
    lines: list[str] = []
    used = 0
    for message in reversed(messages):
        speaker = _SPEAKERS.get(message.role)
        if speaker is None or not message.content.strip():
            continue
        line = f"{speaker}: {message.content.strip()}"
        if used + len(line) > max_chars:
            if not lines:
                lines.append(line[-max_chars:])
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(reversed(lines))


def _parse_options(extraction: ExtractionSettings) -> ParseOptions:
    # No relation labels for the memory: every relation type the model writes is kept.
    return ParseOptions(
        tags=[],
        keep_relations_outside_tags=True,
        max_name_chars=extraction.max_name_chars,
        max_attributes_per_node=extraction.max_attributes_per_node,
        max_nodes_per_chunk=extraction.max_nodes_per_chunk,
        max_relations_per_chunk=extraction.max_relations_per_chunk,
    )


def extract_session_graph(
    llm: LlmClient | None,
    messages: Sequence[RecallEntry],
    memory: MemorySettings,
    extraction: ExtractionSettings,
) -> LlmExtraction:
    """Ask the LLM for the session's entities and relations; report whatever happens."""
    if llm is None or not memory.llm_extraction:
        return LlmExtraction(status=LlmStatus.DISABLED, detail="LLM extraction is turned off")
    text = transcript(messages, memory.transcript_max_chars)
    if not text:
        return LlmExtraction(status=LlmStatus.EMPTY, detail="nothing to read in the session")
    prompt = load_prompt(memory.extract_prompt, extraction.prompt_templates_dir)
    try:
        reply = llm.complete(
            prompt.render(transcript=text).messages(),
            graph_response_format([], strict_tags=False),
        )
    except LlmUnavailableError as exc:
        log.warning("memory extraction skipped, LLM unavailable: %s", exc.message)
        return LlmExtraction(status=LlmStatus.UNAVAILABLE, detail=exc.message)
    outcome = parse_graph_output(reply.content, _parse_options(extraction))
    if outcome.kind in (OutputKind.PROSE, OutputKind.UNRECOGNIZED):
        log.warning("memory extraction answer not usable (%s)", outcome.kind.value)
        return LlmExtraction(status=LlmStatus.UNPARSED, detail=f"answer was {outcome.kind.value}")
    if outcome.kind == OutputKind.EMPTY:
        log.warning("memory extraction answer was empty")
        return LlmExtraction(status=LlmStatus.EMPTY, detail="the model answered nothing")
    return LlmExtraction(status=LlmStatus.OK, detail=outcome.kind.value, graph=outcome.data)


def graph_entities(graph: GraphData, memory: MemorySettings) -> list[SessionEntity]:
    """The graph's nodes as entities; what was read about them becomes their description."""
    return [
        SessionEntity(
            name=node.name, description=clip("; ".join(node.attributes), memory.fact_max_chars)
        )
        for node in graph.nodes
    ]


def graph_relations(graph: GraphData) -> list[SessionRelation]:
    """The graph's relations by entity name."""
    return [SessionRelation(source=r.node1, target=r.node2, type=r.type) for r in graph.relations]


def graph_facts(graph: GraphData, session_id: uuid.UUID, memory: MemorySettings) -> list[NewFact]:
    """One fact per entity with attributes (`Name: a; b`) and one per relation (`A type B`)."""
    facts = [
        NewFact(
            text=clip(f"{node.name}: " + "; ".join(node.attributes), memory.fact_max_chars),
            kind=FactKind.ENTITY,
            importance=memory.importance.entity,
            session_id=session_id,
        )
        for node in graph.nodes
        if node.attributes
    ]
    facts += [
        NewFact(
            text=clip(f"{r.node1} {r.type} {r.node2}", memory.fact_max_chars),
            kind=FactKind.RELATION,
            importance=memory.importance.relation,
            session_id=session_id,
        )
        for r in graph.relations
    ]
    return facts
