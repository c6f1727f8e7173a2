"""Agent mode of the knowledge chat: the model searches with tools, then answers.

Events: one `step` per loop event (think, act, observe, check, reflect, force_respond,
respond), then `references` (the passages the tools returned, numbered as the model saw
them), the answer as `delta`, and `done`, or `error` when the model cannot be reached. The
turn is persisted however the stream ends, with the steps on the assistant message.
"""

from __future__ import annotations

from collections.abc import Iterator
from time import perf_counter

from graphrag.chat import plugins
from graphrag.chat.agent import AgentLoop, AgentPrompt, AgentStep, StepKind
from graphrag.chat.agent_evidence import Evidence
from graphrag.chat.agent_graph_tool import GraphQueryTool
from graphrag.chat.agent_tools import AgentTool, KnowledgeSearchTool, Toolbox
from graphrag.chat.schemas import ChatEvent, ChatEventType
from graphrag.chat.service import persist_turn
from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.errors import LlmUnavailableError
from graphrag.llm.prompts import PromptTemplate, load_prompt

__all__ = ["AGENT_PROMPT", "build_toolbox", "run_agent_chat"]

AGENT_PROMPT = "agent"
_MS_PER_S = 1000.0


def build_toolbox(services: ChatServices, turn: ChatTurn, template: PromptTemplate) -> Toolbox:
    """`knowledge_search` always; `query_knowledge_graph` only when a base in scope has its
    graph on and the request allows the graph (otherwise its calls would only degrade)."""
    tools: list[AgentTool] = [
        KnowledgeSearchTool(
            services, turn, template.render_fragment("tool_knowledge_search").strip()
        )
    ]
    if turn.graph_kb_ids:
        description = template.render_fragment("tool_query_knowledge_graph").strip()
        tools.append(GraphQueryTool(services, turn, description))
    return Toolbox(tools, services.settings.chat.agent_max_calls_per_step)


def _found_entities(steps: list[AgentStep]) -> list[str]:
    names: dict[str, None] = {}
    for step in steps:
        if step.kind is StepKind.OBSERVE:
            names.update(dict.fromkeys(step.detail.get("entities", [])))
    return list(names)


def run_agent_chat(services: ChatServices, turn: ChatTurn) -> Iterator[ChatEvent]:
    """Run the agent loop over the turn's scope, streaming its steps, then the answer."""
    start = perf_counter()
    chat = services.settings.chat
    evidence = Evidence(chat)
    steps: list[AgentStep] = []
    try:
        plugins.load_history(services, turn)
        plugins.recall_memory(services, turn)
        template = load_prompt(AGENT_PROMPT, services.settings.extraction.prompt_templates_dir)
        prompt = AgentPrompt(
            template, chat.agent_max_steps, turn.request.query, turn.memory_context
        )
        toolbox = build_toolbox(services, turn, template)
        loop = AgentLoop(services.llm, toolbox, evidence, prompt, chat, turn.history)
        for step in loop.run():
            steps.append(step)
            yield ChatEvent(type=ChatEventType.STEP, data=step.model_dump(mode="json"))
        turn.answer = loop.answer
        turn.references = evidence.references
        turn.entities = _found_entities(steps)
        yield ChatEvent(
            type=ChatEventType.REFERENCES,
            data={
                "references": [r.model_dump(mode="json") for r in turn.references],
                "entities": turn.entities,
                "tools": toolbox.names,
            },
        )
        yield ChatEvent(type=ChatEventType.DELTA, data={"content": turn.answer})
        turn.completed = True
        turn.timings_ms["total"] = round((perf_counter() - start) * _MS_PER_S, 3)
        yield ChatEvent(
            type=ChatEventType.DONE,
            data={
                "answer_chars": len(turn.answer),
                "timings_ms": turn.timings_ms,
                "references": len(turn.references),
                "steps": loop.steps_taken,
                "reflections": loop.reflections,
                "forced": loop.forced,
            },
        )
    except LlmUnavailableError as exc:
        yield ChatEvent(type=ChatEventType.ERROR, data={"code": exc.code, "message": exc.message})
    finally:
        turn.references = evidence.references
        persist_turn(services, turn, [step.model_dump(mode="json") for step in steps])
