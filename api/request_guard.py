"""The request guard in front of every route: body size caps and the text field limit.

A pure ASGI middleware, so it sees the request before FastAPI reads a byte of the body (JSON and
multipart bodies are parsed before the route, and so before the API key is checked):

- a declared `Content-Length` over the cap is answered 413 at once, the body left unread;
- a body without a length (chunked transfer encoding) is counted as it streams and cut at the
  cap: the route's reading stops, and whatever the route would have answered becomes the 413;
- JSON bodies (`application/json`, `*+json`) have a cap of their own, smaller than the one for
  uploads;
- every `InputText` field validated during the request is held to `api.max_text_field_chars`.
"""

from __future__ import annotations

from contextlib import suppress

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import error_for_path
from graphrag.settings import ApiSettings
from graphrag.text_input import text_field_limit

__all__ = ["TOO_LARGE_CODE", "RequestGuard"]

TOO_LARGE_CODE = "request_too_large"
_TOO_LARGE_STATUS = 413
_JSON_TYPE, _JSON_SUFFIX = "application/json", "+json"


class _BodyTooLargeError(Exception):
    """Raised into the app's `receive` once the streamed body passed the cap."""


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _is_json(content_type: str | None) -> bool:
    essence = (content_type or "").split(";", 1)[0].strip().lower()
    return essence == _JSON_TYPE or essence.endswith(_JSON_SUFFIX)


class RequestGuard:
    """Wrap `app` so that no request body beyond its cap is read (see the module docstring)."""

    def __init__(self, app: ASGIApp, settings: ApiSettings) -> None:
        self.app = app
        self.settings = settings

    def _cap(self, scope: Scope) -> int:
        if _is_json(_header(scope, b"content-type")):
            return self.settings.max_json_body_bytes
        return self.settings.max_body_bytes

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
