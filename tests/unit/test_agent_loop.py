"""The agent loop with a scripted fake of the LLM port and a fake search tool."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

import pytest
from sqlalchemy.orm import sessionmaker

from graphrag.chat.agent import AgentLoop, AgentPrompt, AgentStep, StepKind
from graphrag.chat.agent_chat import AGENT_PROMPT, build_toolbox
from graphrag.chat.agent_evidence import Evidence
from graphrag.chat.agent_tools import KnowledgeSearchArgs, Toolbox, ToolResult
from graphrag.chat.schemas import ChatRequest
from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.graph.store import DisabledGraphStore
from graphrag.llm.client import LlmClient, ToolReply
from graphrag.llm.messages import ChatMessage, WireToolCall
from graphrag.llm.prompts import load_prompt
from graphrag.llm.tool_results import ToolResultCut
from graphrag.search.models import KbScope, MatchType, SearchHit
from graphrag.settings import ChatSettings, get_settings

pytestmark = pytest.mark.unit

QUESTION = "Who runs the plant?"
PASSAGE = "Elin Brask runs the Zorvath plant."


def _chat(**update: Any) -> ChatSettings:
    return get_settings().chat.model_copy(update=update)


def _hit() -> SearchHit:
    return SearchHit(
        chunk_id=uuid.uuid4(),
        knowledge_id=uuid.uuid4(),
        kb_id=uuid.uuid4(),
        seq=0,
        page=None,
        chunk_type="text",
        content=PASSAGE,
        file_name="plant.md",
        score=0.9,
        rank=1,
        match_type=MatchType.HYBRID,
    )


class FakeLlm:
    """Answers from a list of replies, recording what each call sent."""

    def __init__(self, replies: list[ToolReply]) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[list[ChatMessage], list[str]]] = []

    def complete_tools(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], max_tokens: int
    ) -> ToolReply:
        self.calls.append((messages, [t["function"]["name"] for t in tools]))
        return self.replies.pop(0) if self.replies else ToolReply(content="", finish_reason="stop")


class FakeSearch:
    """`knowledge_search` returning one fixed passage."""

    name = "knowledge_search"
    description = "search"
    arguments_model = KnowledgeSearchArgs

    def __init__(self) -> None:
        self.queries: list[str] = []

    def run(self, arguments: dict[str, Any], evidence: Evidence) -> ToolResult:
        self.queries.append(KnowledgeSearchArgs.model_validate(arguments).query)
        passages = evidence.add([_hit()])
        return ToolResult(output={"passages": passages}, summary=f"{len(passages)} passage(s)")


def _text(content: str, finish: str = "stop") -> ToolReply:
    return ToolReply(content=content, finish_reason=finish)


def _search(query: str = "plant", call_id: str = "c1") -> ToolReply:
    call = WireToolCall(id=call_id, name="knowledge_search", arguments=json.dumps({"query": query}))
    return ToolReply(content="", finish_reason="tool_calls", tool_calls=[call])


def _run(
    replies: list[ToolReply],
    chat: ChatSettings | None = None,
    results_cut: ToolResultCut | None = None,
) -> tuple[AgentLoop, FakeLlm, FakeSearch, list[AgentStep]]:
    chat = chat or _chat()
    llm, search = FakeLlm(replies), FakeSearch()
    prompt = AgentPrompt(load_prompt(AGENT_PROMPT), chat.agent_max_steps, QUESTION)
    toolbox = Toolbox([search], chat.agent_max_calls_per_step)
    loop = AgentLoop(llm, toolbox, Evidence(chat), prompt, chat, results_cut=results_cut)
    steps = list(loop.run())
    return loop, llm, search, steps


def _kinds(steps: list[AgentStep]) -> list[StepKind]:
    return [s.kind for s in steps]


def test_tool_call_then_cited_answer() -> None:
    loop, llm, search, steps = _run([_search("plant"), _text("Elin Brask [1].")])
    assert loop.answer == "Elin Brask [1]." and not loop.forced and loop.reflections == 0
    assert search.queries == ["plant"]
    assert _kinds(steps) == [StepKind.ACT, StepKind.OBSERVE, StepKind.RESPOND]
    assert steps[0].tool == "knowledge_search" and steps[0].arguments == {"query": "plant"}
    second = llm.calls[1][0]
    tool_message = second[-1]
    assert tool_message.role == "tool" and tool_message.tool_call_id == "c1"
    assert json.loads(tool_message.content)["passages"][0]["text"] == PASSAGE
    assert second[-2].role == "assistant" and second[-2].tool_calls[0].id == "c1"
    assert "step 2 of 4" in second[0].content


def test_max_steps_then_force_respond_without_tools() -> None:
    chat = _chat(agent_max_steps=3)
    replies = [_search(f"q{i}", f"c{i}") for i in range(3)] + [_text("From what I found: [1].")]
    loop, llm, search, steps = _run(replies, chat)
    assert loop.steps_taken == 3 and loop.forced
    assert len(llm.calls) == 4  # three steps with tools, one forced answer
    assert [tools for _, tools in llm.calls] == [["knowledge_search"]] * 3 + [[]]
    forced_messages = llm.calls[-1][0]
    assert (
        forced_messages[-1].role == "user" and "No more tool calls" in forced_messages[-1].content
    )
    assert _kinds(steps)[-2:] == [StepKind.FORCE_RESPOND, StepKind.RESPOND]
    assert loop.answer == "From what I found: [1]."
    assert len(search.queries) == 3


def test_forced_answer_that_is_empty_falls_back_to_a_fixed_text() -> None:
    loop, llm, _, _ = _run([_search(f"q{i}", f"c{i}") for i in range(4)])
    assert loop.forced and len(llm.calls) == 5
    assert loop.answer == load_prompt(AGENT_PROMPT).render_fragment("no_answer").strip()


def test_one_reflection_at_most() -> None:
    replies = [_search(), _text("Elin Brask runs it."), _text("Elin Brask, still.")]
    loop, llm, _, steps = _run(replies)
    assert _kinds(steps).count(StepKind.REFLECT) == 1
    assert loop.reflections == 1 and loop.answer == "Elin Brask, still."
    assert len(llm.calls) == 3
    reask = llm.calls[2][0]
    assert reask[-2].role == "assistant" and reask[-2].content == "Elin Brask runs it."
    assert "cites no passage" in reask[-1].content


def test_no_reflection_without_passages_or_when_disabled() -> None:
    loop, llm, _, steps = _run([_text("I do not know.")])
    assert loop.answer == "I do not know." and len(llm.calls) == 1
    loop, llm, _, steps = _run(
        [_search(), _text("No citation here.")], _chat(agent_max_reflections=0)
    )
    assert loop.answer == "No citation here." and StepKind.REFLECT not in _kinds(steps)


def test_empty_and_truncated_replies_are_asked_again_and_count_as_steps() -> None:
    replies = [_text(""), _text("Elin Br", "length"), _text("Elin Brask.")]
    loop, llm, _, steps = _run(replies, _chat(agent_max_answer_retries=2))
    assert loop.answer == "Elin Brask." and loop.steps_taken == 3
    assert [s.summary for s in steps if s.kind is StepKind.CHECK] == [
        "empty reply, asked again",
        "reply cut off, asked again",
    ]
    assert "was empty" in llm.calls[1][0][-1].content
    assert "cut off" in llm.calls[2][0][-1].content


def test_truncated_answer_at_the_step_limit_is_kept_when_the_forced_one_is_empty() -> None:
    replies = [_text("partial", "length")] * 4 + [_text("")]
    loop, _, _, _ = _run(replies, _chat(agent_max_answer_retries=4))
    assert loop.forced and loop.answer == "partial"


def test_one_retry_of_a_cut_off_reply_then_it_is_the_answer() -> None:
    replies = [_text("Elin Br", "length"), _text("Elin Bra", "length"), _text("unused")]
    loop, llm, _, steps = _run(replies)
    assert len(llm.calls) == 2 and loop.answer_retries == 1 and not loop.forced
    assert loop.answer == "Elin Bra"
    assert [s.summary for s in steps] == ["reply cut off, asked again", "cut off, retries spent"]


def test_one_retry_of_an_empty_reply_then_a_fixed_text() -> None:
    loop, llm, _, steps = _run([_text(""), _text(""), _text("unused")])
    assert len(llm.calls) == 2 and not loop.forced
    assert loop.answer == load_prompt(AGENT_PROMPT).render_fragment("no_answer").strip()
    assert _kinds(steps) == [StepKind.CHECK, StepKind.RESPOND]


def test_invalid_native_call_becomes_an_observation() -> None:
    bad = WireToolCall(id="x1", name="delete_everything", arguments="{}")
    broken = WireToolCall(id="x2", name="knowledge_search", arguments="{}")
    first = ToolReply(content="", finish_reason="tool_calls", tool_calls=[bad, broken])
    _, llm, search, steps = _run([first, _text("Sorry.")])
    observed = [s for s in steps if s.kind is StepKind.OBSERVE]
    assert [s.detail["ok"] for s in observed] == [False, False]
    assert "no tool named 'delete_everything'" in observed[0].summary
    assert "query" in observed[1].summary and search.queries == []
    outputs = [json.loads(m.content) for m in llm.calls[1][0] if m.role == "tool"]
    assert [o["error"] for o in outputs] == ["invalid_call", "invalid_call"]
    assert outputs[0]["available_tools"] == ["knowledge_search"]


def test_written_calls_are_run_and_answered_in_a_user_message() -> None:
    written = (
        'Searching. <tool_call>{"name": "knowledge_search", "arguments": {"query": "bees"}}'
        "</tool_call><tool_call>not json</tool_call>"
    )
    loop, llm, search, steps = _run([_text(written), _text("Bees [1].")])
    assert search.queries == ["bees"] and loop.answer == "Bees [1]."
    assert _kinds(steps)[0] is StepKind.THINK and steps[0].summary == "Searching."
    sent = llm.calls[1][0]
    assert sent[-2].role == "assistant" and sent[-2].content == written
    assert not sent[-2].tool_calls and sent[-1].role == "user"
    results = json.loads(sent[-1].content.split("\n", 1)[1])
    assert results[0]["result"]["passages"][0]["n"] == 1
    assert results[1]["result"]["error"] == "invalid_call"


CUT = ToolResultCut(keep_last=3, max_chars=20)


def test_old_native_tool_results_are_cut_in_what_is_sent() -> None:
    replies = [_search(f"q{i}", f"c{i}") for i in range(3)] + [_text("Elin Brask [1].")]
    loop, llm, _, _ = _run(replies, results_cut=CUT)
    sent = llm.calls[3][0][1:]  # the fourth call, after its system message
    assert [m.role for m in sent] == ["user"] + ["assistant", "tool"] * 3
    first, second, third = (m for m in sent if m.role == "tool")
    assert first.content.startswith(loop.messages[2].content[:20])
    assert "characters cut]" in first.content and len(loop.messages[2].content) > 20
    # The last three messages, the second result among them, go whole.
    assert (second, third) == (loop.messages[4], loop.messages[6])
    assert sent[-3:] == loop.messages[-3:]
    assert "characters cut]" not in loop.messages[2].content  # the loop's own record is whole


def test_old_written_tool_results_are_cut_too() -> None:
    written = '<tool_call>{"name": "knowledge_search", "arguments": {"query": "q"}}</tool_call>'
    loop, llm, _, _ = _run([_text(written)] * 3 + [_text("Bees [1].")], results_cut=CUT)
    sent = llm.calls[3][0][1:]
    results = [i for i, m in enumerate(sent) if m.content.startswith("Results of your")]
    assert results == [2, 4, 6]
    assert "characters cut]" in sent[2].content
    assert sent[4:] == loop.messages[4:]
    assert not any("characters cut]" in m.content for m in sent if m.role == "assistant")


def test_without_a_cut_every_result_is_sent_whole() -> None:
    replies = [_search(f"q{i}", f"c{i}") for i in range(3)] + [_text("[1]")]
    loop, llm, _, _ = _run(replies)
    assert llm.calls[3][0][1:] == loop.messages


def test_the_summary_of_folded_turns_leads_the_system_text() -> None:
    summary = "Summary of the earlier conversation (40 messages): Objective: cranes"
    prompt = AgentPrompt(load_prompt(AGENT_PROMPT), 4, QUESTION, "The user is Ada.", summary)
    system = prompt.system(1)
    assert f"The conversation so far, summarised:\n{summary}" in system
    assert system.index(summary) < system.index("The user is Ada.")
    assert "summarised" not in AgentPrompt(load_prompt(AGENT_PROMPT), 4, QUESTION).system(1)


def test_calls_beyond_the_per_reply_limit_are_refused() -> None:
    calls = [
        WireToolCall(id=f"c{i}", name="knowledge_search", arguments='{"query": "q"}')
        for i in range(3)
    ]
    first = ToolReply(content="", finish_reason="tool_calls", tool_calls=calls)
    _, llm, search, _ = _run([first, _text("[1]")], _chat(agent_max_calls_per_step=2))
    assert len(search.queries) == 2
    outputs = [json.loads(m.content) for m in llm.calls[1][0] if m.role == "tool"]
    assert "too many calls" in outputs[2]["reason"]


def test_a_passage_seen_again_keeps_its_number() -> None:
    evidence = Evidence(_chat())
    hit = _hit()
    assert evidence.add([hit])[0]["n"] == 1
    again = evidence.add([hit, _hit()])
    assert again[0] == {"n": 1, "shown_before": True} and again[1]["n"] == 2
    assert len(evidence.references) == 2
    assert evidence.cited("see [2]") and evidence.cited("see [1, 2]")
    assert not evidence.cited("see [3]") and not evidence.cited("no citation")


class NoEmbedder:
    """Tools are only built here, never run."""

    dim = 1

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise AssertionError("not called")

    def embed_query(self, text: str) -> list[float]:
        raise AssertionError("not called")

    def close(self) -> None:
        """Nothing to release."""


def _services() -> ChatServices:
    settings = get_settings()

    return ChatServices(
        settings=settings,
        sessions=sessionmaker(),
        embedder=NoEmbedder(),
        llm=LlmClient(settings.llm),
        graph=DisabledGraphStore(),
    )


@pytest.mark.parametrize(
    ("graph_on", "use_graph", "offered"),
    [
        (False, True, ["knowledge_search"]),
        (True, True, ["knowledge_search", "query_knowledge_graph"]),
        (True, False, ["knowledge_search"]),
    ],
)
def test_graph_tool_offered_only_with_a_graph_kb(
    graph_on: bool, use_graph: bool, offered: list[str]
) -> None:
    scopes = [
        KbScope(kb_id=uuid.uuid4(), vector=True, keyword=True, graph_on=False),
        KbScope(kb_id=uuid.uuid4(), vector=True, keyword=True, graph_on=graph_on),
    ]
    turn = ChatTurn(
        tenant_id=uuid.uuid4(),
        session_id=uuid.uuid4(),
        owner="t",
        request=ChatRequest(query=QUESTION, use_graph=use_graph),
        scopes=scopes,
    )
    toolbox = build_toolbox(_services(), turn, load_prompt(AGENT_PROMPT))
    assert toolbox.names == offered
    schemas = toolbox.schemas()
    assert [s["function"]["name"] for s in schemas] == offered
    assert schemas[0]["function"]["parameters"]["required"] == ["query"]
    if "query_knowledge_graph" in offered:
        entities = schemas[1]["function"]["parameters"]["properties"]["entities"]
        assert entities["type"] == "array" and entities["items"] == {"type": "string"}
