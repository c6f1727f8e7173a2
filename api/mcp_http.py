"""The MCP server over streamable HTTP at `/mcp`, behind the API's own key check.

Every request is authenticated like a REST request (by the request guard, which finds that this
route needs a key, else here with `api.auth.authenticate_scope`): a missing or bad key is
answered 401 before the MCP SDK sees the request; the caller and the services ride on the
request's state to the tools, which check capabilities themselves; `ask` passes the API's chat
gate (`api.chat_gate`: a `chat_busy` tool error past the key's chats at once, its own threads).
The SDK runs stateless (each request stands alone, so the key is checked on every call) and
answers JSON.

A route added this way gets no lifespan of its own: the SDK's session manager must run inside
the API's lifespan (`McpHttp.running`), and is built anew for each run of it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette import status
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from api.auth import authenticate_scope, remembered_principal
from api.chat_gate import ChatGate
from api.errors import error_response, graphrag_error_response
from api.mcp_server import McpContext, build_mcp_server
from api.state import AppState
from graphrag.auth.models import Principal
from graphrag.errors import GraphragError, UnauthorizedError
from graphrag.faces.services import FaceServices
from graphrag.settings import Settings

__all__ = ["MCP_PATH", "McpHttp"]

MCP_PATH = "/mcp"
_PRINCIPAL = "graphrag_principal"  # request-state keys the wrapper fills for the tools
_SERVICES = "graphrag_services"
_CHAT_GATE = "graphrag_chat_gate"
T = TypeVar("T")


def _from_request(ctx: McpContext, key: str) -> Any:
    request = ctx.request_context.request
    return getattr(getattr(request, "state", None), key, None)


def _http_caller(ctx: McpContext) -> Principal:
    principal = _from_request(ctx, _PRINCIPAL)
    if not isinstance(principal, Principal):
        raise UnauthorizedError("an API key is required: send `Authorization: Bearer <key>`")
    return principal


def _http_services(ctx: McpContext) -> FaceServices:
    services = _from_request(ctx, _SERVICES)
    assert isinstance(services, FaceServices), "set by McpHttp for every request"
    return services


async def _gated(ctx: McpContext, principal: Principal, work: Callable[[], T]) -> T:
    gate = _from_request(ctx, _CHAT_GATE)
    assert isinstance(gate, ChatGate), "set by McpHttp for every request"
    ticket = gate.enter(principal)
    try:
        return await gate.run(work)
    finally:
        ticket.release()


def _security(settings: Settings) -> TransportSecuritySettings:
    faces = settings.faces
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=bool(faces.mcp_allowed_hosts),
        allowed_hosts=list(faces.mcp_allowed_hosts),
        allowed_origins=list(faces.mcp_allowed_origins),
    )


class McpHttp:
    """An ASGI app for the `/mcp` route: key check, then the SDK's streamable HTTP app."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.server: MCPServer[Any] = build_mcp_server(
            settings, _http_services, _http_caller, _gated
        )
        self._http: Starlette | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The SDK's session manager, for the span of the API's lifespan."""
        self._http = self.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            max_request_body_size=self.settings.faces.mcp_max_body_bytes,
            transport_security=_security(self.settings),
        )
        try:
            async with self.server.session_manager.run():
                yield
        finally:
            self._http = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        state: AppState = request.app.state.graphrag
        # Authentication first: a stranger gets 401 whatever state the server is in.
        principal = remembered_principal(scope)
        try:
            if principal is None:
                principal = await run_in_threadpool(authenticate_scope, state, scope)
        except GraphragError as exc:
            await graphrag_error_response(exc)(scope, receive, send)
            return
        if self._http is None:
            await error_response(
                status.HTTP_503_SERVICE_UNAVAILABLE,
                "service_unavailable",
                "the MCP server is not running",
            )(scope, receive, send)
            return
        setattr(request.state, _PRINCIPAL, principal)
        setattr(request.state, _SERVICES, state.face_services())
        setattr(request.state, _CHAT_GATE, state.chat_gate)
        await self._http(scope, receive, send)
