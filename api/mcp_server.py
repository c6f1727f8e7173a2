"""The MCP face: `graphrag.faces.tools` served with the official MCP SDK.

The same server runs over streamable HTTP inside the API (`api.mcp_http`, at `/mcp`) and over
stdio (`graphrag mcp --key ...`). The tools only adapt: who calls comes from `caller` (the
HTTP request's API key, or the key given to the stdio command), the work from the core, and
a refusal (missing capability, unknown base, bad argument) returns as a tool error naming the
backend's stable code. `ask`, which waits for the LLM, runs through a `ChatRunner`: over HTTP
the API's chat gate (the key's chats at once, threads apart from the shared pool).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Protocol, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from graphrag.auth.models import Principal
from graphrag.errors import GraphragError
from graphrag.eval import tools as eval_tools
from graphrag.eval.schemas import EvalRunPublic
from graphrag.faces import tools
from graphrag.faces.services import FaceServices
from graphrag.faces.tools import DocumentStatus, KnowledgeAnswer, KnowledgeBaseSummary
from graphrag.graph.search_models import GraphSearchResponse
from graphrag.ingest.schemas import KnowledgePublic
from graphrag.search.models import SearchResponse
from graphrag.settings import Settings
from graphrag.text_input import Bounded

__all__ = ["Caller", "ChatRunner", "McpContext", "ServicesOf", "build_mcp_server", "in_thread"]

McpContext = Context[Any, Any]
Caller = Callable[[McpContext], Principal]  # who is calling, from the request's context
ServicesOf = Callable[[McpContext], FaceServices]  # the serving process's services
T = TypeVar("T")


class ChatRunner(Protocol):
    """Runs a chat-like tool's blocking `work` for `principal` (may refuse: a `GraphragError`)."""

    def __call__(
        self, ctx: McpContext, principal: Principal, work: Callable[[], T]
    ) -> Awaitable[T]: ...


async def in_thread(ctx: McpContext, principal: Principal, work: Callable[[], T]) -> T:
    """A `ChatRunner` that runs `work` on a worker thread (stdio: one caller, no other routes)."""
    return await anyio.to_thread.run_sync(work)


# Every text and list argument is capped by a setting (`Bounded`, within the HTTP request's
# limits; the stdio command sets them for its whole run), so a refusal is one error.
KbArg = Annotated[
    str,
    Bounded("faces.max_model_id_chars"),
    Field(description="a knowledge base: its name, `kb/<name>` or its id"),
]
_Long = Bounded("api.max_text_field_chars")
_READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
_ASK = ToolAnnotations(readOnlyHint=True, openWorldHint=False, idempotentHint=False)
_WRITE = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)

_INSTRUCTIONS = (
    "Knowledge bases of documents with a knowledge graph. Find a base with "
    "list_knowledge_bases, then search it (passages), graph_search it (entities and "
    "relations) or ask it (an answer citing passages as [n]); add_text_document adds a "
    "document, document_status follows its processing; start_evaluation scores a question set "
    "of the base and evaluation_run reads the run."
)


def _tool_error(exc: GraphragError) -> ToolError:
    return ToolError(f"{exc.code}: {exc.message}")


class _Tools:
    """The tools, bound to the process's services and to how the caller is known."""

    def __init__(self, services: ServicesOf, caller: Caller, chat_runner: ChatRunner) -> None:
        self.services = services
        self.caller = caller
        self.chat_runner = chat_runner

    def _run(self, ctx: McpContext, fn: Callable[..., T], **arguments: Any) -> T:
        try:
            return fn(self.services(ctx), self.caller(ctx), **arguments)
        except GraphragError as exc:
            raise _tool_error(exc) from exc

    def list_knowledge_bases(self, ctx: McpContext) -> list[KnowledgeBaseSummary]:
        """The knowledge bases this key can read: id, name, description, graph switch."""
        return self._run(ctx, tools.list_knowledge_bases)

    def search(
        self,
        kb: KbArg,
        query: Annotated[
            str,
            Bounded("search.max_query_chars"),
            Field(min_length=1, description="what to look for"),
        ],
        ctx: McpContext,
        top_k: Annotated[int | None, Field(ge=1, description="most passages")] = None,
        use_graph: Annotated[bool, Field(description="add the entities' passages")] = True,
    ) -> SearchResponse:
        """Passages of a base ranked by hybrid search (vector + keyword), plus those reached
        through the knowledge graph from the query's entities when the base has a graph."""
        return self._run(ctx, tools.search, kb=kb, query=query, top_k=top_k, use_graph=use_graph)

    def graph_search(
        self,
        kb: KbArg,
        entity: Annotated[
            str,
            Bounded("graph_search.max_entity_chars"),
            Field(min_length=1, description="part of an entity's name"),
        ],
        ctx: McpContext,
        relation_types: Annotated[
            Annotated[list[Annotated[str, _Long]], Bounded("graph_search.max_relation_types")]
            | None,
            Field(description="only these relation types"),
        ] = None,
        limit: Annotated[int | None, Field(ge=1, description="most entities")] = None,
    ) -> GraphSearchResponse:
        """Entities whose name contains `entity` (case-sensitive), their relations and the
        passages they were read from."""
        return self._run(
            ctx,
            tools.graph_search,
            kb=kb,
            entity=entity,
            relation_types=relation_types,
            limit=limit,
        )

    async def ask(
        self,
        kb: Annotated[
            str,
            Bounded("faces.max_model_id_chars"),
            Field(description="a base, or several joined by + (kb/a+kb/b)"),
        ],
        question: Annotated[str, Bounded("chat.max_query_chars"), Field(min_length=1)],
        ctx: McpContext,
        use_graph: Annotated[bool, Field(description="let the graph add passages")] = True,
    ) -> KnowledgeAnswer:
        """An answer from the base's passages, citing them as [n], with those references."""

        def work() -> KnowledgeAnswer:
            return self._run(ctx, tools.ask, kb=kb, question=question, use_graph=use_graph)

        try:
            return await self.chat_runner(ctx, self.caller(ctx), work)
        except GraphragError as exc:
            raise _tool_error(exc) from exc

    def add_text_document(
        self,
        kb: KbArg,
        title: Annotated[str, Field(min_length=1, max_length=500)],
        content: Annotated[str, _Long, Field(min_length=1, description="the text (Markdown)")],
        ctx: McpContext,
    ) -> KnowledgePublic:
        """Add a text as a document of the base; it is parsed, indexed and (when the base has
        a graph) read into the graph in the background: follow it with document_status."""
        return self._run(ctx, tools.add_text_document, kb=kb, title=title, content=content)

    def document_status(
        self,
        document_id: Annotated[str, _Long, Field(description="the id add_text_document returned")],
        ctx: McpContext,
    ) -> DocumentStatus:
        """A document's status (pending, processing, finalizing, completed, failed...),
        counts and per-stage progress."""
        return self._run(ctx, tools.document_status, document_id=document_id)

    def start_evaluation(
        self,
        kb: KbArg,
        eval_set_id: Annotated[str, _Long, Field(description="a question set of the base")],
        ctx: McpContext,
        graph: Annotated[bool | None, Field(description="graph on or off; null: the base's")] = (
            None
        ),
        top_k: Annotated[int | None, Field(ge=1, description="hits fetched per question")] = None,
        answer: Annotated[bool, Field(description="also answer each question")] = False,
    ) -> EvalRunPublic:
        """Start an evaluation run of one of the base's question sets; read it with
        evaluation_run (status, progress, then R@k, MRR and the other metrics)."""
        return self._run(
            ctx,
            eval_tools.start_evaluation,
            kb=kb,
            eval_set_id=eval_set_id,
            graph=graph,
            top_k=top_k,
            answer=answer,
        )

    def evaluation_run(
        self,
        kb: KbArg,
        run_id: Annotated[str, _Long, Field(description="the id start_evaluation returned")],
        ctx: McpContext,
    ) -> EvalRunPublic:
        """An evaluation run's status, progress and, once done, its metrics."""
        return self._run(ctx, eval_tools.evaluation_run, kb=kb, run_id=run_id)


# Each tool and what it does to the knowledge bases, for clients that ask before calling.
_TOOLS: dict[str, ToolAnnotations] = {
    "list_knowledge_bases": _READ_ONLY,
    "search": _READ_ONLY,
    "graph_search": _READ_ONLY,
    "ask": _ASK,
    "add_text_document": _WRITE,
    "document_status": _READ_ONLY,
    "start_evaluation": _WRITE,
    "evaluation_run": _READ_ONLY,
}


def build_mcp_server(
    settings: Settings, services: ServicesOf, caller: Caller, chat_runner: ChatRunner = in_thread
) -> MCPServer[Any]:
    """The MCP server with the knowledge-base and evaluation tools; `ask` runs through
    `chat_runner`."""
    server: MCPServer[Any] = MCPServer(
        settings.faces.mcp_server_name, instructions=_INSTRUCTIONS, version=settings.version
    )
    bound = _Tools(services, caller, chat_runner)
    for name, hints in _TOOLS.items():
        server.add_tool(getattr(bound, name), name=name, annotations=hints)
    return server
