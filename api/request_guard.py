"""The request guard in front of every route: the API key, body size caps, the text field limit.

A pure ASGI middleware, so it sees the request before FastAPI reads a byte of the body (FastAPI
parses JSON and multipart bodies before it runs the route's dependencies):

- a request for a route that needs a key (`api.auth.KeyedRoutes`) is authenticated first: a
  missing, bad or revoked key is 401, an address that sent too many bad keys or a key over its
  rate is 429, the body left unread either way; the caller is left on the request's state;
- a declared `Content-Length` over the cap is answered 413 at once, the body left unread;
- a body without a length (chunked transfer encoding) is counted as it streams and cut at the
  cap: the route's reading stops, and whatever the route would have answered becomes the 413;
- only a multipart upload may be as large as `api.max_body_mb`; any other body (JSON, text, or
  no `Content-Type` at all, which FastAPI reads as JSON) is held to `api.max_json_body_kb`;
- every `InputText` field validated during the request is held to `api.max_text_field_chars`.
"""

from __future__ import annotations

from contextlib import suppress

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.auth import KeyedRoutes, authenticate_scope, remember_principal
from api.errors import error_for_path, graphrag_error_for_path
from api.state import AppState
from graphrag.errors import GraphragError
from graphrag.settings import ApiSettings
from graphrag.text_input import text_field_limit

__all__ = ["TOO_LARGE_CODE", "RequestGuard"]

TOO_LARGE_CODE = "request_too_large"
_TOO_LARGE_STATUS = 413
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

    def __init__(self, app: ASGIApp, settings: ApiSettings) -> None:
        self.app = app
        self.settings = settings
        self._keyed: KeyedRoutes | None = None  # read from the app's routes at the first request

    def _cap(self, scope: Scope) -> int:
        if _is_multipart(_header(scope, b"content-type")):
            return self.settings.max_body_bytes
        return self.settings.max_json_body_bytes

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
        cap = self._cap(scope)
        declared = _header(scope, b"content-length")
        if declared is not None and declared.strip().isdecimal() and int(declared) > cap:
            await self._refuse(scope, receive, send, cap)
            return
        state = _Stream(cap, receive, send)
        # A cut body surfaces as the error it was raised as: the answer below is the 413.
        with text_field_limit(self.settings.max_text_field_chars), suppress(_BodyTooLargeError):
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
