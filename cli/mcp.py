"""`graphrag mcp`: the MCP tools over stdio, for one API key.

The process opens the same services as the API (database, graph store, LLM, embedder, file
storage, the outbox relay that sends tasks) and serves the same MCP server as `/mcp`. The key
is checked again on every tool call, so a key revoked meanwhile stops working at once. Stdout
carries the MCP protocol only; messages go to stderr.
"""

from __future__ import annotations

from rich.console import Console

from cli.services import command_services
from graphrag.auth.keys import verify_key
from graphrag.auth.models import Principal
from graphrag.db.engine import session_scope
from graphrag.errors import UnauthorizedError
from graphrag.settings import Settings
from graphrag.text_input import request_limits

__all__ = ["serve_stdio"]

_err = Console(stderr=True)


def serve_stdio(settings: Settings, key: str) -> bool:
    """Serve until stdin closes; False (nothing served) if the key is refused at start."""
    from api.mcp_server import build_mcp_server

    with command_services(settings) as opened:
        services = opened.faces()

        def caller(_ctx: object) -> Principal:
            with session_scope(services.chat.sessions) as session:
                return verify_key(session, settings.auth, key)

        try:
            caller(None)
        except UnauthorizedError as exc:
            _err.print(f"[red]{exc.message}[/]")
            return False
        server = build_mcp_server(settings, lambda _ctx: services, caller)
        with request_limits(settings):  # the tools' arguments held to the API's caps
            server.run("stdio")
    return True
