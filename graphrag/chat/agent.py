"""The agent loop: a bounded state machine around a tool-using model.

CALL_LLM -> PARSE_RESPONSE -> EXECUTE_TOOLS (then CALL_LLM again) or CHECK_RESPONSE.
CHECK_RESPONSE is deterministic: an empty or cut-off reply is asked again (at most
`agent_max_answer_retries` times a turn; then a cut-off reply is the answer as it is, an empty
one falls back to the last refused answer or a fixed text); an answer that cites no passage
while passages were gathered is sent back (REFLECT, at most `agent_max_reflections` times);
otherwise RESPOND. Each model call that may use tools is one
step; once `agent_max_steps` are spent, FORCE_RESPOND makes one last call without tools and
answers from what was gathered. No model judges another model's answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Protocol

from graphrag.chat.agent_budget import AgentCall, fit_agent_call
from graphrag.chat.agent_evidence import Evidence
from graphrag.chat.agent_tools import Toolbox, ToolResult
from graphrag.chat.schemas import AgentStep, StepKind
from graphrag.chat.tool_calls import (
    CallSource,
    InvalidToolCall,
    ParsedReply,
    ToolCall,
    parse_reply,
)
from graphrag.llm.client import ToolReply
from graphrag.llm.messages import ChatMessage
from graphrag.llm.prompts import PromptTemplate
from graphrag.llm.tool_results import ToolResultCut
from graphrag.settings import ChatSettings

__all__ = ["AgentLoop", "AgentPrompt", "AgentStep", "StepKind", "ToolLlm"]

_TRUNCATED = "length"


class ToolLlm(Protocol):
    """The part of the LLM client the loop uses."""

    def complete_tools(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], max_tokens: int
    ) -> ToolReply: ...


class AgentPrompt:
    """The agent template rendered for one question, with the summary of the conversation's
    folded turns and the user's memory, when there are."""

    def __init__(
        self,
        template: PromptTemplate,
        max_steps: int,
        question: str,
        memory: str = "",
        summary: str | None = None,
    ) -> None:
        self._template = template
        self._max_steps = max_steps
        self._question = question
        self._memory = memory
        self._summary = summary

    def system(self, step: int, memory_cut: int = 0) -> str:
        """The system text for model call number `step`, the last `memory_cut` characters of
        the memory block left out (the whole-prompt budget's last resort)."""
        rendered = self._template.render(
            step=str(step), max_steps=str(self._max_steps), question=self._question
        )
        text = (rendered.system or "").strip()
        if self._summary:
            text += "\n\n" + self.fragment("history_summary", summary=self._summary)
        memory = self._memory[: max(len(self._memory) - memory_cut, 0)]
        if memory:
            text += "\n\n" + self.fragment("memory", memory=memory)
        return text

    def question(self) -> str:
        """The user turn that carries the question."""
        rendered = self._template.render(step="1", max_steps="1", question=self._question)
        return (rendered.user or self._question).strip()

    def fragment(self, name: str, **values: str) -> str:
        """A fixed instruction of the template."""
        return self._template.render_fragment(name, **values).strip()


class AgentLoop:
    """One agent turn. Iterate `run()` for the steps; then read `answer`."""

    def __init__(
        self,
        llm: ToolLlm,
        toolbox: Toolbox,
        evidence: Evidence,
        prompt: AgentPrompt,
        chat: ChatSettings,
        history: list[ChatMessage] | None = None,
        results_cut: ToolResultCut | None = None,
        budget: int | None = None,
    ) -> None:
        self._llm = llm
        self._toolbox = toolbox
        self._evidence = evidence
        self._prompt = prompt
        self._chat = chat
        self._results_cut = results_cut  # None: every tool result is sent whole
        self._budget = budget  # characters of a call's whole prompt; None: unbounded
        self.messages: list[ChatMessage] = list(history or [])
        self._question_at = len(self.messages)
        self._written_results: set[int] = set()  # user messages that carry tool results
        self.messages.append(ChatMessage(role="user", content=prompt.question()))
        self.steps_taken = 0
        self.reflections = 0
        self.answer_retries = 0  # empty or cut-off replies asked again
        self.forced = False
        self.answer = ""
        self._fallback = ""  # the last answer refused by the checks, if the forced one is empty

    def _call(self, tools: list[dict[str, Any]]) -> ToolReply:
        return self._llm.complete_tools(self.call_messages(), tools, self._chat.answer_max_tokens)

    def call_messages(self, step: int | None = None) -> list[ChatMessage]:
        """What call number `step` sends (default: the next call's): the system text and the
        dialogue, within the budget."""
        if step is None:
            step = min(self.steps_taken + 1, self._chat.agent_max_steps)
        sent = self.sent_messages()
        if self._budget is None:
            return [ChatMessage(role="system", content=self._prompt.system(step)), *sent]
        call = AgentCall(sent, self._question_at, self._written_results)
        return fit_agent_call(lambda cut: self._prompt.system(step, cut), call, self._budget)

    def sent_messages(self) -> list[ChatMessage]:
        """The dialogue as the next call sends it: tool results older than the last messages
        cut (`memory.tool_result_max_chars`), the recent ones whole."""
        if self._results_cut is None:
            return list(self.messages)
        return self._results_cut.apply(self.messages, self._written_results)[0]

    def run(self) -> Iterator[AgentStep]:
        """Call, parse, act or check, until an answer is accepted or the budget is spent."""
        while self.steps_taken < self._chat.agent_max_steps:
            reply = self._call(self._toolbox.schemas())
            self.steps_taken += 1
            parsed = parse_reply(reply.content, reply.tool_calls)
            if parsed.calls:
                yield from self._execute(reply, parsed)
                continue
            self._fallback = parsed.content or self._fallback
            step = self._check(reply, parsed.content)
            yield step
            if step.kind is StepKind.RESPOND:
                self.answer = parsed.content or self._fallback or self._prompt.fragment("no_answer")
                return
        yield from self._force_respond()

    def _execute(self, reply: ToolReply, parsed: ParsedReply) -> Iterator[AgentStep]:
        """Run the calls (up to the per-reply limit) and put their results in the dialogue."""
        n = self.steps_taken
        if parsed.content:
            summary = parsed.content[: self._chat.reference_excerpt_chars]
            yield AgentStep(step=n, kind=StepKind.THINK, summary=summary)
        native = parsed.source is CallSource.NATIVE
        # Native calls are answered by `tool` messages; written ones by one user message.
        said = parsed.content if native else reply.content
        calls = reply.tool_calls if native else []
        self.messages.append(ChatMessage(role="assistant", content=said, tool_calls=calls))
        written: list[dict[str, Any]] = []
        for index, call in enumerate(parsed.calls):
            name = call.name or ""
            arguments = None if isinstance(call, InvalidToolCall) else call.arguments
            yield AgentStep(step=n, kind=StepKind.ACT, tool=name, arguments=arguments)
            result = self._run_call(index, call)
            detail = {"ok": result.ok, **result.detail}
            yield AgentStep(
                step=n, kind=StepKind.OBSERVE, tool=name, summary=result.summary, detail=detail
            )
            if native:
                tool_message = ChatMessage(role="tool", content=result.text(), tool_call_id=call.id)
                self.messages.append(tool_message)
            else:
                written.append({"tool": name, "result": result.output})
        if written:
            results = json.dumps(written, ensure_ascii=False)
            text = self._prompt.fragment("tool_results", results=results)
            self._written_results.add(len(self.messages))
            self.messages.append(ChatMessage(role="user", content=text))

    def _run_call(self, index: int, call: ToolCall | InvalidToolCall) -> ToolResult:
        if index >= self._toolbox.max_calls_per_step:
            return self._toolbox.too_many()
        return self._toolbox.execute(call, self._evidence)

    def _check(self, reply: ToolReply, content: str) -> AgentStep:
        """CHECK_RESPONSE and REFLECT: accept the answer, or ask again with a fixed instruction."""
        n = self.steps_taken
        cut = reply.finish_reason == _TRUNCATED
        if (not content or cut) and self.answer_retries < self._chat.agent_max_answer_retries:
            self.answer_retries += 1
            if not content:
                self.messages.append(
                    ChatMessage(role="user", content=self._prompt.fragment("empty_answer"))
                )
                return AgentStep(step=n, kind=StepKind.CHECK, summary="empty reply, asked again")
            self._send_back(content, "truncated_answer")
            return AgentStep(step=n, kind=StepKind.CHECK, summary="reply cut off, asked again")
        if not content or cut:
            # The retries are spent: answer with what there is rather than ask on.
            kept = "cut off" if content else "empty"
            return AgentStep(step=n, kind=StepKind.RESPOND, summary=f"{kept}, retries spent")
        uncited = self._evidence.references and not self._evidence.cited(content)
        if uncited and self.reflections < self._chat.agent_max_reflections:
            self.reflections += 1
            self._send_back(content, "reflect")
            return AgentStep(step=n, kind=StepKind.REFLECT, summary="no passage cited, asked again")
        return AgentStep(step=n, kind=StepKind.RESPOND, summary=f"{len(content)} characters")

    def _send_back(self, content: str, instruction: str) -> None:
        self.messages.append(ChatMessage(role="assistant", content=content))
        self.messages.append(ChatMessage(role="user", content=self._prompt.fragment(instruction)))

    def _force_respond(self) -> Iterator[AgentStep]:
        """One last call without tools; calls it still writes are dropped, never run."""
        self.forced = True
        n = self.steps_taken
        yield AgentStep(step=n, kind=StepKind.FORCE_RESPOND, summary="step budget spent")
        self.messages.append(
            ChatMessage(role="user", content=self._prompt.fragment("force_respond"))
        )
        reply = self._call([])
        content = parse_reply(reply.content, []).content
        self.answer = content or self._fallback or self._prompt.fragment("no_answer")
        yield AgentStep(step=n, kind=StepKind.RESPOND, summary=f"{len(self.answer)} characters")
