"""`graphrag ask` and the end of `graphrag demo`: a question over a knowledge base, streamed."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from cli.services import command_services
from graphrag.chat.schemas import ChatRequest, DeltaEvent, ErrorEvent, SessionCreate
from graphrag.chat.service import run_chat, start_turn
from graphrag.chat.sessions import SessionAccess, create_session
from graphrag.db.engine import session_scope
from graphrag.errors import NotFoundError
from graphrag.ingest.batch import find_kb_by_name
from graphrag.search.models import GraphContribution
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant

__all__ = ["ask"]

CLI_OWNER = "cli"


def _graph_cell(graph: GraphContribution | None) -> str:
    """How the graph ranked a reference: its graph rank and the path from the question."""
    if graph is None:
        return ""
    cell = f"#{graph.rank} via {' -> '.join(graph.path)}"
    if graph.via_chunk_id is not None:
        cell += f", named in passage {str(graph.via_chunk_id)[:8]}"
    return cell


def ask(settings: Settings, console: Console, kb_name: str, question: str) -> bool:
    """Print the answer as it streams, then its references; False if it did not complete."""
    with command_services(settings) as opened:
        services = opened.chat()
        with session_scope(services.sessions) as session:
            tenant = ensure_tenant(session, settings.api.default_tenant)
            kb_id = find_kb_by_name(session, tenant, kb_name)
            if kb_id is None:
                raise NotFoundError(f"no knowledge base named {kb_name!r}")
            request = SessionCreate(kb_ids=[kb_id])
            chat = create_session(session, tenant, CLI_OWNER, request, settings.chat)
        # The command line acts for its own memory owner, as a key bound to it would.
        access = SessionAccess.bound_to(tenant, CLI_OWNER, settings.memory.default_owner)
        turn = start_turn(services, access, chat.id, ChatRequest(query=question))
        console.print(f"[bold]Q:[/] {question}\n[bold]A:[/] ", end="")
        for event in run_chat(services, turn):
            if isinstance(event.data, DeltaEvent):
                console.print(event.data.content, end="", highlight=False, markup=False)
            elif isinstance(event.data, ErrorEvent):
                console.print(f"\n[red]{event.data.message}[/]")
    console.print()
    table = Table("#", "document", "page", "match", "graph", "excerpt", title="references")
    for ref in turn.references:
        table.add_row(
            str(ref.n),
            ref.file_name,
            str(ref.page or ""),
            ref.match_type,
            _graph_cell(ref.graph),
            ref.excerpt[:80],
        )
    console.print(table)
    if turn.entities:
        console.print(f"entities searched in the graph: {', '.join(turn.entities)}")
    services.graph.close()
    return turn.completed
