"""The agent's tools and the toolbox that offers them, checks calls and runs them.

A tool validates its own arguments with a pydantic model (whose JSON schema is what the model
is shown) and returns a `ToolResult`: the JSON output the model reads, a one-line summary and
details for the step events. A call the toolbox cannot run (unknown or not offered tool,
unreadable call, bad arguments, too many calls in one reply) gets an `invalid_call` output that
says why, so the model can correct itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from graphrag.chat.agent_evidence import Evidence
from graphrag.chat.tool_calls import InvalidToolCall, ToolCall
from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.db.engine import session_scope
from graphrag.search.models import KbScope, RetrievalRequest, SearchHit
from graphrag.search.retrieval import retrieve

__all__ = [
    "AgentTool",
    "KnowledgeSearchArgs",
    "KnowledgeSearchTool",
    "ToolName",
    "ToolResult",
    "Toolbox",
    "TurnTool",
    "hybrid_hits",
    "tool_schema",
]

INVALID_CALL = "invalid_call"


class ToolName(StrEnum):
    KNOWLEDGE_SEARCH = "knowledge_search"
    QUERY_KNOWLEDGE_GRAPH = "query_knowledge_graph"


class ToolResult(BaseModel):
    """What a call produced: `output` goes to the model as JSON, the rest to the step events."""

    output: dict[str, Any]
    summary: str
    detail: dict[str, Any] = Field(default_factory=dict)
    ok: bool = True

    def text(self) -> str:
        """The output as the model reads it."""
        return json.dumps(self.output, ensure_ascii=False)


class AgentTool(Protocol):
    """A tool the model may call."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def arguments_model(self) -> type[BaseModel]: ...

    def run(self, arguments: dict[str, Any], evidence: Evidence) -> ToolResult:
        """Validate the arguments (pydantic `ValidationError` if wrong) and run."""
        ...


class TurnTool:
    """The base of a tool that works within one turn: its services, scope and request."""

    def __init__(self, services: ChatServices, turn: ChatTurn, description: str) -> None:
        self._services = services
        self._turn = turn
        self.description = description


def tool_schema(tool: AgentTool) -> dict[str, Any]:
    """The OpenAI `tools` entry describing one tool."""
    parameters = tool.arguments_model.model_json_schema()
    parameters.pop("title", None)
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": parameters},
    }


def _invalid(reason: str, offered: list[str]) -> ToolResult:
    return ToolResult(
        output={"error": INVALID_CALL, "reason": reason, "available_tools": offered},
        summary=f"invalid call: {reason}",
        ok=False,
    )


def _validation_reason(exc: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(p) for p in error['loc']) or 'arguments'}: {error['msg']}"
        for error in exc.errors(include_url=False, include_input=False)
    ]
    return "bad arguments (" + "; ".join(problems) + ")"


class Toolbox:
    """The tools offered in one agent turn."""

    def __init__(self, tools: Sequence[AgentTool], max_calls_per_step: int) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self.max_calls_per_step = max_calls_per_step

    @property
    def names(self) -> list[str]:
        """Names of the offered tools, in the order they are described to the model."""
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """The `tools` JSON sent with each call that may use tools."""
        return [tool_schema(tool) for tool in self._tools.values()]

    def execute(self, call: ToolCall | InvalidToolCall, evidence: Evidence) -> ToolResult:
        """Run a readable call of an offered tool; anything else is an `invalid_call`."""
        if isinstance(call, InvalidToolCall):
            return _invalid(call.reason, self.names)
        tool = self._tools.get(call.name)
        if tool is None:
            return _invalid(f"no tool named {call.name!r} is available", self.names)
        try:
            return tool.run(call.arguments, evidence)
        except ValidationError as exc:
            return _invalid(_validation_reason(exc), self.names)

    def too_many(self) -> ToolResult:
        """The output of a call beyond the per-reply limit."""
        return _invalid(
            f"too many calls in one reply: at most {self.max_calls_per_step} are run", self.names
        )


def hybrid_hits(
    services: ChatServices, turn: ChatTurn, query: str, scopes: list[KbScope]
) -> list[SearchHit]:
    """Vector + keyword search (weighted RRF) over `scopes`, without the graph complement."""
    search = services.settings.search
    request = RetrievalRequest(
        query=query,
        scopes=scopes,
        knowledge_ids=turn.request.knowledge_ids,
        top_k=services.settings.chat.top_k,
        vector_threshold=search.vector_threshold,
        keyword_threshold=search.keyword_threshold,
        use_graph=False,
    )
    with session_scope(services.sessions) as session:
        return retrieve(session, services.embedder, search, request).hits


class KnowledgeSearchArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: str = Field(min_length=1, description="What to look for, in a few words.")


class KnowledgeSearchTool(TurnTool):
    """`knowledge_search`: hybrid retrieval over every base of the turn's scope."""

    name = ToolName.KNOWLEDGE_SEARCH.value
    arguments_model = KnowledgeSearchArgs

    def run(self, arguments: dict[str, Any], evidence: Evidence) -> ToolResult:
        """Numbered passages for the query (an empty list when nothing matched)."""
        args = KnowledgeSearchArgs.model_validate(arguments)
        query = args.query[: self._services.settings.chat.max_query_chars]
        hits = hybrid_hits(self._services, self._turn, query, self._turn.scopes)
        passages = evidence.add(hits)
        return ToolResult(
            output={"passages": passages},
            summary=f"{len(passages)} passage(s) for {args.query!r}",
            detail={"passages": [p["n"] for p in passages]},
        )
