"""Agent mode of the knowledge chat: the model searches with tools, then answers.

`AgentProducer` is the agent's answer producer for `service.run_turn`: the history and memory
stages prepare the turn, then each loop event (think, act, observe, check, reflect,
force_respond, respond) is a `step`, the passages the tools returned (numbered as the model
saw them) are the `references`, and the accepted answer is one `delta`. The steps are stored
on the assistant message.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from graphrag.chat.agent import AgentLoop, AgentPrompt, ToolLlm
from graphrag.chat.agent_evidence import Evidence
from graphrag.chat.agent_graph_tool import GraphQueryTool
from graphrag.chat.agent_tools import AgentTool, KnowledgeSearchTool, Toolbox
from graphrag.chat.pipeline import AGENT_PREPARE_ORDER, StageOrder
from graphrag.chat.schemas import (
    AgentChatAnswer,
    AgentDoneEvent,
    AgentReferencesEvent,
    AgentStep,
    DoneEvent,
    StepKind,
)
from graphrag.chat.service import chat_answer
from graphrag.chat.turn import ChatServices, ChatTurn, TurnUsage
from graphrag.llm.client import ToolReply
from graphrag.llm.messages import ChatMessage
from graphrag.llm.prompts import PromptTemplate, load_prompt
from graphrag.llm.tool_results import ToolResultCut

__all__ = ["AGENT_PROMPT", "AgentProducer", "agent_chat_answer", "build_toolbox"]

AGENT_PROMPT = "agent"


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


class _MeteredLlm:
    """The loop's LLM port, adding each call's tokens to the turn's usage."""

    def __init__(self, llm: ToolLlm, usage: TurnUsage) -> None:
        self._llm = llm
        self._usage = usage

    def complete_tools(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], max_tokens: int
    ) -> ToolReply:
        reply = self._llm.complete_tools(messages, tools, max_tokens)
        self._usage.add(reply.usage)
        return reply


class AgentProducer:
    """The agent loop over the turn's scope; one instance per turn."""

    stages: StageOrder = AGENT_PREPARE_ORDER

    def __init__(self) -> None:
        self._loop: AgentLoop | None = None
        self._tools: list[str] = []

    def gather(self, services: ChatServices, turn: ChatTurn) -> Iterator[AgentStep]:
        """Run the loop, one step at a time, until an answer is accepted or forced."""
        chat = services.settings.chat
        template = load_prompt(AGENT_PROMPT, services.settings.extraction.prompt_templates_dir)
        prompt = AgentPrompt(
            template,
            chat.agent_max_steps,
            turn.request.query,
            turn.memory_context,
            turn.history_summary,
        )
        toolbox = build_toolbox(services, turn, template)
        self._tools = toolbox.names
        evidence = Evidence(chat)
        # The same list: passages found before a failure are stored with the partial turn.
        turn.references = evidence.references
        llm = _MeteredLlm(services.llm, turn.usage)
        memory = services.settings.memory
        cut = ToolResultCut(memory.keep_last_messages, memory.tool_result_max_chars)
        budget = memory.compact_threshold_chars
        self._loop = AgentLoop(llm, toolbox, evidence, prompt, chat, turn.history, cut, budget)
        steps: list[AgentStep] = []
        for step in self._loop.run():
            steps.append(step)
            yield step
        turn.entities = _found_entities(steps)
        # What the model was last sent (its system text, the dialogue with the tool calls and
        # results): the turn's transcript for the interaction log.
        turn.messages = self._loop.call_messages(max(self._loop.steps_taken, 1))

    def answer(self, services: ChatServices, turn: ChatTurn) -> Iterator[str]:
        """The accepted answer, whole."""
        if self._loop is not None:
            yield self._loop.answer

    def references_event(self, turn: ChatTurn) -> AgentReferencesEvent:
        """The passages the tools returned, and the tools offered."""
        return AgentReferencesEvent(
            references=turn.references,
            entities=turn.entities,
            graph_truncated=turn.graph_truncated,
            tools=self._tools,
        )

    def done_event(self, done: DoneEvent) -> AgentDoneEvent:
        """How many model calls the answer took, and whether the budget forced it."""
        loop = self._loop
        return AgentDoneEvent(
            **dict(done),
            steps=loop.steps_taken if loop else 0,
            reflections=loop.reflections if loop else 0,
            forced=loop.forced if loop else False,
        )

    def trace(self, turn: ChatTurn) -> list[dict[str, Any]]:
        """The loop's steps."""
        return [step.model_dump(mode="json") for step in turn.steps]


def agent_chat_answer(turn: ChatTurn) -> AgentChatAnswer:
    """A finished agent turn as the non-streamed answer, with its steps."""
    return AgentChatAnswer(**dict(chat_answer(turn)), steps=turn.steps)
