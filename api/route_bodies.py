"""Which body each route takes, read once from the app's routes: the request guard's body caps.

The cap is the route's, never the client's choice (its `Content-Type` or length):
- a route with form fields (an upload) takes `multipart/form-data` up to `api.max_body_mb`;
- a route marked `TEXT_BODY` (it takes a document's text) takes up to `api.max_text_body_kb`;
- the MCP route (`/mcp`) takes up to `faces.mcp_max_body_bytes`, its SDK's own cap;
- every other route, and a request no route takes, up to `api.max_json_body_kb`.
A multipart body sent to a route without form fields is refused (415) before it is read.
"""

from __future__ import annotations

from enum import StrEnum

from fastapi import Depends, FastAPI, params
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, RouteContext
from starlette.types import Scope

from api.route_table import RouteTable
from graphrag.settings import Settings

__all__ = ["TEXT_BODY", "BodyKind", "RouteBodies", "body_kind", "takes_text"]


class BodyKind(StrEnum):
    """What a route's body may be, and so its cap."""

    FORM = "form"  # multipart form fields (uploads): the upload cap
    TEXT = "text"  # JSON holding a document's text: the text cap
    MCP = "mcp"  # the MCP server's JSON-RPC: its own cap
    JSON = "json"  # small JSON, or no body at all: the small cap


def takes_text() -> None:
    """Marks a route whose JSON body holds a whole document's text (a larger cap)."""


TEXT_BODY = Depends(takes_text)


def _marked(dependant: Dependant) -> bool:
    return any(sub.call is takes_text or _marked(sub) for sub in dependant.dependencies)


def _has_form(dependant: Dependant) -> bool:
    # File(...) is a kind of Form(...): both are read from a multipart (or urlencoded) body.
    return any(isinstance(p.field_info, params.Form) for p in dependant.body_params) or any(
        _has_form(sub) for sub in dependant.dependencies
    )


def body_kind(context: RouteContext, mcp_path: str) -> BodyKind:
    """The body a route takes, from its own declarations."""
    if isinstance(context.original_route, APIRoute):
        if _has_form(context.dependant):
            return BodyKind.FORM
        return BodyKind.TEXT if _marked(context.dependant) else BodyKind.JSON
    return BodyKind.MCP if context.path == mcp_path else BodyKind.JSON


class RouteBodies:
    """The body kind of a request, by the first route matching its path and method, in the
    router's order (as the router picks); a request no route takes is held to the small cap."""

    def __init__(self, app: FastAPI, settings: Settings, mcp_path: str) -> None:
        api = settings.api
        self.caps = {
            BodyKind.FORM: api.max_body_bytes,
            BodyKind.TEXT: api.max_text_body_bytes,
            BodyKind.MCP: settings.faces.mcp_max_body_bytes,
            BodyKind.JSON: api.max_json_body_bytes,
        }
        self._table = RouteTable(app, lambda context: body_kind(context, mcp_path))

    def kind(self, scope: Scope) -> BodyKind:
        """The body kind of the route the HTTP request of `scope` goes to."""
        return self._table.lookup(scope, default=BodyKind.JSON)
