"""The request guard in front of every route: the API key, body size caps, request input caps.

A pure ASGI middleware, so it sees the request before FastAPI reads a byte of the body (FastAPI
parses JSON and multipart bodies before it runs the route's dependencies):

- a request for a route that needs a key (`api.auth.KeyedRoutes`) is authenticated first: a
  missing, bad or revoked key is 401, an address that sent too many bad keys or a key over its
  rate is 429, the body left unread either way; the caller is left on the request's state;
- the body cap is the route's (`api.route_bodies`), not the client's: only a route with form
  fields takes `multipart/form-data` (elsewhere 415, unread), up to `api.max_body_mb`; a route
  taking a document's text has `api.max_text_body_kb`, `/mcp` its SDK's cap, any other body
  (JSON, text, or no `Content-Type` at all, which FastAPI reads as JSON) `api.max_json_body_kb`;
- a declared `Content-Length` over the cap is answered 413 at once, the body left unread;
- a body without a length (chunked transfer encoding) is counted as it streams and cut at the
  cap: the route's reading stops, and whatever the route would have answered becomes the 413;
- the request's input is validated within `request_limits`: every `InputText` field held to
  `api.max_text_field_chars`, every `Bounded` list to its setting.
"""

from __future__ import annotations

from contextlib import suppress

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.auth import KeyedRoutes, authenticate_scope, remember_principal
from api.errors import error_for_path, graphrag_error_for_path
from api.mcp_http import MCP_PATH
from api.route_bodies import BodyKind, RouteBodies
from api.state import AppState
from graphrag.errors import GraphragError
from graphrag.settings import Settings
from graphrag.text_input import request_limits

__all__ = ["NOT_MULTIPART_CODE", "TOO_LARGE_CODE", "RequestGuard"]

TOO_LARGE_CODE = "request_too_large"
NOT_MULTIPART_CODE = "unsupported_media_type"
_TOO_LARGE_STATUS = 413
_UNSUPPORTED_STATUS = 415
_MULTIPART_TYPE = "multipart/form-data"


class _BodyTooLargeError(Exception):
    """Raised into the app's `receive` once the streamed body passed the cap."""


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _is_multipart(content_type: str | None) -> bool:
    return (content_type or "").split(";", 1)[0].strip().lower() == _MULTIPART_TYPE


class RequestGuard:
    """Wrap `app` so that no request body beyond its cap is read (see the module docstring)."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self._keyed: KeyedRoutes | None = None  # read from the app's routes at the first request
        self._bodies: RouteBodies | None = None  # likewise

    def _route_body(self, scope: Scope) -> tuple[BodyKind, int]:
        """The body the request's route takes, and the cap of this request's body."""
        if self._bodies is None:
            self._bodies = RouteBodies(scope["app"], self.settings, MCP_PATH)
        kind = self._bodies.kind(scope)
        multipart = _is_multipart(_header(scope, b"content-type"))
        # A form route's cap is for its multipart upload; any other body there is small JSON.
        cap_kind = BodyKind.JSON if kind is BodyKind.FORM and not multipart else kind
        return kind, self._bodies.caps[cap_kind]

    async def _authenticate(self, scope: Scope) -> Response | None:
        """The refusal of a request that needs a key and has no valid one, else None (and the
        caller on the request's state)."""
        if self._keyed is None:
            self._keyed = KeyedRoutes(scope["app"])
        if not self._keyed.needs_key(scope):
            return None
        state: AppState = scope["app"].state.graphrag
        try:
            principal = await run_in_threadpool(authenticate_scope, state, scope)
        except GraphragError as exc:
            return graphrag_error_for_path(scope["path"], exc)
        remember_principal(scope, principal)
        return None

    async def _not_multipart(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = "this route takes no multipart/form-data body (only uploads do)"
        response = error_for_path(
            scope.get("path", ""), _UNSUPPORTED_STATUS, NOT_MULTIPART_CODE, message
        )
        await response(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, cap: int) -> None:
        message = f"the request body exceeds the limit of {cap} bytes"
        response = error_for_path(
            scope.get("path", ""), _TOO_LARGE_STATUS, TOO_LARGE_CODE, message, {"limit_bytes": cap}
        )
        await response(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = await self._authenticate(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        kind, cap = self._route_body(scope)
        if kind is not BodyKind.FORM and _is_multipart(_header(scope, b"content-type")):
            await self._not_multipart(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared is not None and declared.strip().isdecimal() and int(declared) > cap:
            await self._refuse(scope, receive, send, cap)
            return
        state = _Stream(cap, receive, send)
        # A cut body surfaces as the error it was raised as: the answer below is the 413.
        with request_limits(self.settings), suppress(_BodyTooLargeError):
            await self.app(scope, state.receive, state.send)
        if state.exceeded and not state.started:
            await self._refuse(scope, receive, send, cap)


class _Stream:
    """The request's `receive` counted against the cap, and `send` held back once it is passed."""

    def __init__(self, cap: int, receive: Receive, send: Send) -> None:
        self.cap = cap
        self._receive = receive
        self._send = send
        self.received = 0
        self.exceeded = False
        self.started = False

    async def receive(self) -> Message:
        if self.exceeded:
            raise _BodyTooLargeError
        message = await self._receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.cap:
                self.exceeded = True
                raise _BodyTooLargeError
        return message

    async def send(self, message: Message) -> None:
        # After the cap was passed the app answers an error of its own making (it could not read
        # the body): it is dropped, and the guard answers 413 instead.
        if self.exceeded and not self.started:
            return
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)
