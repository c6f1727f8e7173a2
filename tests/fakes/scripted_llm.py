"""A scripted OpenAI-compatible HTTP server for tests.

Serves `POST /v1/chat/completions` (plain and SSE streaming, text or tool calls; images as
base64 data URLs, as vision models take them, checked and matched by `RuleMatch.image`),
`POST /v1/embeddings` (deterministic unit vectors), `GET /v1/models` and llama.cpp's
`GET /props` (its slot count), answering from the rules of a `Script` (see
`tests.fakes.llm_script`); chat requests hold one of the script's slots (`tests.fakes.llm_slots`).
Control endpoints let tests in other processes drive it: `PUT/GET /_script`,
`GET/DELETE /_requests`, `GET/DELETE /_stats` (requests at once), `GET /_health`.

In-process: `ScriptedLlmServer` runs it on a free 127.0.0.1 port in a thread.
Standalone: `python -m tests.fakes.scripted_llm --host 127.0.0.1 --port 8091 [--rules f.json]`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import itertools
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from tests.fakes.llm_script import (
    Choice,
    Endpoint,
    RecordedRequest,
    Reply,
    Rule,
    Script,
    ScriptState,
)
from tests.fakes.llm_slots import SlotGate, SlotStats
from tests.fakes.openai_payloads import (
    CONTEXT_OVERFLOW_STATUS,
    MALFORMED_JSON,
    chat_completion,
    chat_stream_events,
    completion_usage,
    context_overflow_body,
    embeddings_response,
    error_body,
    models_response,
)

__all__ = ["ScriptedLlmServer", "create_app", "main"]

LOCALHOST = "127.0.0.1"
STARTUP_TIMEOUT_S = 10.0
STARTUP_POLL_S = 0.01
SHUTDOWN_GRACE_S = 1  # a request parked in a `delay_s` fault must not hold up shutdown
SYSTEM_ROLES = ("system", "developer")


class _BadRequestError(Exception):
    """The request body is not what an OpenAI endpoint accepts."""


def _message_text(content: Any) -> str:
    """Text of a message's content, whether a string or a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _chat_parts(body: dict[str, Any]) -> tuple[str | None, str | None]:
    """(last user message, joined system messages) of a chat request."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _BadRequestError("`messages` must be a non-empty list")
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    systems = [m for m in messages if isinstance(m, dict) and m.get("role") in SYSTEM_ROLES]
    user = _message_text(users[-1].get("content")) if users else None
    system = "\n".join(_message_text(m.get("content")) for m in systems) if systems else None
    return user, system


def _image_count(body: dict[str, Any]) -> int:
    """Images in the last user message, each checked as a vision server reads it: an
    `image_url` part whose URL is a base64 data URL of an image (else the request is refused)."""
    users = [m for m in body["messages"] if isinstance(m, dict) and m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    if not isinstance(content, list):
        return 0
    count = 0
    for part in content:
        if not isinstance(part, dict) or part.get("type") != "image_url":
            continue
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else None
        head, _, payload = str(url or "").partition(",")
        if not (head.startswith("data:image/") and head.endswith(";base64") and payload):
            raise _BadRequestError("an image_url must be a base64 data URL of an image")
        try:
            base64.b64decode(payload, validate=True)
        except binascii.Error as exc:
            raise _BadRequestError(f"the image's base64 is invalid: {exc}") from exc
        count += 1
    return count


def _all_text(body: dict[str, Any]) -> str:
    """Every message's text, as the prompt whose words the usage counts."""
    messages = [m for m in body["messages"] if isinstance(m, dict)]
    return " ".join(_message_text(m.get("content")) for m in messages)


def _embedding_inputs(body: dict[str, Any]) -> list[str]:
    raw = body.get("input")
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and raw:
        # Token-id inputs are hashed through their text form: still deterministic.
        return [item if isinstance(item, str) else json.dumps(item) for item in raw]
    raise _BadRequestError("`input` must be a string or a non-empty list")


def _error(status: int, message: str, retry_after_ms: int | None = None) -> JSONResponse:
    headers = {"retry-after-ms": str(retry_after_ms)} if retry_after_ms is not None else None
    return JSONResponse(error_body(status, message), status_code=status, headers=headers)


class _DroppedConnection(Response):
    """No answer at all: the connection is closed before any byte of a response is written, as
    a server that crashes or a proxy that gives up does (the client sees the peer hang up)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # ASGI has no way to hang up; uvicorn's `receive` is bound to the request's cycle,
        # which holds the connection's transport.
        transport = getattr(getattr(receive, "__self__", None), "transport", None)
        close = getattr(transport, "close", None)  # asyncio's or uvloop's transport
        if not callable(close):
            raise RuntimeError("the server does not expose the connection to drop")
        close()
        # Let uvicorn see the connection lost, so it does not try to answer 500 on it.
        await asyncio.sleep(0)


async def _fault_response(choice: Choice, prompt: str = "") -> Response | None:
    """Sleep for a delay fault; the dropped connection or error response of a fault, if any
    (`prompt`: the request's text, whose size a context overflow reports)."""
    fault = choice.fault
    if fault is None:
        return None
    if fault.delay_s:
        await asyncio.sleep(fault.delay_s)
    if fault.drop_connection:
        return _DroppedConnection()
    if fault.context_overflow:
        body = context_overflow_body(prompt, fault.context_tokens)
        return JSONResponse(body, status_code=CONTEXT_OVERFLOW_STATUS)
    if fault.status is not None:
        return _error(fault.status, f"scripted fault (rule {choice.rule})", fault.retry_after_ms)
    return None


def _cut(choice: Choice) -> tuple[str | None, bool]:
    """The reply text after any `truncate` fault, and whether it was cut."""
    text = choice.reply.text()
    limit = choice.fault.truncate if choice.fault else None
    if limit is None or text is None:
        return text, False
    return text[:limit], True


async def _paced(events: Iterator[str], pause_s: float) -> AsyncIterator[str]:
    """`events`, each sent `pause_s` after the one before."""
    for event in events:
        await asyncio.sleep(pause_s)
        yield event


def _malformed_stream() -> Iterator[str]:
    """A stream whose second event is cut mid-JSON."""
    head = {"id": "chatcmpl-broken", "object": "chat.completion.chunk", "created": 0, "choices": []}
    yield f"data: {json.dumps(head)}\n\n"
    yield f"data: {MALFORMED_JSON}\n\n"
    yield "data: [DONE]\n\n"


class _Handlers:
    """Route handlers bound to one `ScriptState`."""

    def __init__(self, state: ScriptState, gate: SlotGate) -> None:
        self.state = state
        self.gate = gate
        self._ids = itertools.count(1)

    async def _body(self, request: Request) -> tuple[dict[str, Any], int]:
        """The JSON body, and its index in the request log."""
        raw = await request.body()
        try:
            body = json.loads(raw)
        except json.JSONDecodeError as exc:
            self.state.record(request.method, request.url.path, raw.decode(errors="replace"))
            raise _BadRequestError(f"body is not JSON: {exc}") from exc
        index = self.state.record(request.method, request.url.path, body)
        if not isinstance(body, dict):
            raise _BadRequestError("body must be a JSON object")
        return body, index

    def _choose(
        self,
        endpoint: Endpoint,
        body: dict[str, Any],
        user: str | None,
        system: str | None,
        images: int = 0,
    ) -> Choice:
        model = str(body.get("model", ""))
        prompt = _all_text(body) if endpoint == "chat" else None
        return self.state.choose(endpoint, user, system, model, images=images, prompt=prompt)

    async def chat(self, request: Request) -> Response:
        script = self.state.script
        async with self.gate.slot(script.slots, script.latency_s):
            return await self._chat(request)

    async def _chat(self, request: Request) -> Response:
        try:
            body, index = await self._body(request)
            user, system = _chat_parts(body)
            images = _image_count(body)
        except _BadRequestError as exc:
            return _error(400, str(exc))
        choice = self._choose("chat", body, user, system, images)
        if (failed := await _fault_response(choice, _all_text(body))) is not None:
            return failed
        stream = bool(body.get("stream"))
        if choice.fault is not None and choice.fault.malformed_json:
            if stream:
                return StreamingResponse(_malformed_stream(), media_type="text/event-stream")
            return Response(MALFORMED_JSON, media_type="application/json")
        text, truncated = _cut(choice)
        model, call_id, prompt = str(body.get("model", "")), str(next(self._ids)), _all_text(body)
        if not stream:
            payload = chat_completion(
                choice.reply, text, model=model, call_id=call_id, prompt=prompt, truncated=truncated
            )
            self.state.record_usage(index, payload["usage"])
            return JSONResponse(payload)
        options = body.get("stream_options") or {}
        usage = None
        if isinstance(options, dict) and options.get("include_usage"):
            usage = completion_usage(prompt, text)
            self.state.record_usage(index, usage)  # what the stream's last chunk will report
        events = chat_stream_events(
            choice.reply,
            text,
            model=model,
            call_id=call_id,
            truncated=truncated,
            piece_chars=self.state.script.stream_piece_chars,
            usage=usage,
        )
        pause_s = choice.fault.piece_delay_s if choice.fault else None
        if pause_s:
            return StreamingResponse(_paced(events, pause_s), media_type="text/event-stream")
        return StreamingResponse(events, media_type="text/event-stream")

    async def embeddings(self, request: Request) -> Response:
        try:
            body, _ = await self._body(request)
            texts = _embedding_inputs(body)
        except _BadRequestError as exc:
            return _error(400, str(exc))
        choice = self._choose("embeddings", body, "\n".join(texts), None)
        if (failed := await _fault_response(choice)) is not None:
            return failed
        if choice.fault is not None and choice.fault.malformed_json:
            return Response(MALFORMED_JSON, media_type="application/json")
        dim = body.get("dimensions") or self.state.script.embedding_dim
        zeros = self.state.script.zero_embeddings
        payload = embeddings_response(
            texts,
            model=str(body.get("model", "")),
            dim=int(dim),
            encoding_format=str(body.get("encoding_format") or "float"),
            zero=zeros.accepts if zeros is not None else None,
        )
        return JSONResponse(payload)

    async def models(self, request: Request) -> Response:
        self.state.record(request.method, request.url.path, None)
        return JSONResponse(models_response(self.state.script.models))

    async def props(self, request: Request) -> Response:
        self.state.record(request.method, request.url.path, None)
        script = self.state.script
        if script.slots is None:
            return _error(404, "this server does not describe its slots")
        return JSONResponse({"total_slots": script.slots, "model_path": script.models[0]})

    async def get_stats(self, _: Request) -> Response:
        return JSONResponse(self.gate.stats().model_dump())

    async def delete_stats(self, _: Request) -> Response:
        self.gate.reset()
        return Response(status_code=204)

    async def put_script(self, request: Request) -> Response:
        try:
            script = Script.model_validate_json(await request.body())
        except ValidationError as exc:
            return JSONResponse({"detail": json.loads(exc.json())}, status_code=422)
        self.state.replace(script)
        return JSONResponse(script.model_dump(mode="json"))

    async def get_script(self, _: Request) -> Response:
        return JSONResponse(self.state.script.model_dump(mode="json"))

    async def get_requests(self, _: Request) -> Response:
        return JSONResponse([r.model_dump(mode="json") for r in self.state.requests()])

    async def delete_requests(self, _: Request) -> Response:
        self.state.clear_requests()
        return Response(status_code=204)

    async def health(self, _: Request) -> Response:
        return JSONResponse({"status": "ok"})


def create_app(state: ScriptState, gate: SlotGate | None = None) -> Starlette:
    """The Starlette app answering from `state`, its chat requests measured by `gate`."""
    h = _Handlers(state, gate or SlotGate())
    return Starlette(
        routes=[
            Route("/v1/chat/completions", h.chat, methods=["POST"]),
            Route("/v1/embeddings", h.embeddings, methods=["POST"]),
            Route("/v1/models", h.models, methods=["GET"]),
            Route("/props", h.props, methods=["GET"]),
            Route("/_stats", h.get_stats, methods=["GET"]),
            Route("/_stats", h.delete_stats, methods=["DELETE"]),
            Route("/_script", h.put_script, methods=["PUT"]),
            Route("/_script", h.get_script, methods=["GET"]),
            Route("/_requests", h.get_requests, methods=["GET"]),
            Route("/_requests", h.delete_requests, methods=["DELETE"]),
            Route("/_health", h.health, methods=["GET"]),
        ]
    )


class ScriptedLlmServer:
    """The fake server on a free local port, served by uvicorn from a daemon thread."""

    def __init__(self, script: Script | None = None, host: str = LOCALHOST) -> None:
        self.state = ScriptState(script)
        self.gate = SlotGate()
        self._host = host
        self._port: int | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Root URL (control endpoints live here), e.g. `http://127.0.0.1:41234`."""
        if self._port is None:
            raise RuntimeError("the scripted LLM server is not started")
        return f"http://{self._host}:{self._port}"

    @property
    def openai_base_url(self) -> str:
        """Base URL for OpenAI clients: the root URL plus `/v1`."""
        return f"{self.url}/v1"

    def start(self) -> None:
        """Bind a free port, serve in the background and wait until uvicorn is up."""
        if self._thread is not None:
            return
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._host, 0))
        self._port = int(sock.getsockname()[1])
        config = uvicorn.Config(
            create_app(self.state, self.gate),
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="scripted-llm", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the scripted LLM server did not start")
            time.sleep(STARTUP_POLL_S)

    def stop(self) -> None:
        """Ask uvicorn to exit and wait for the thread."""
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(STARTUP_TIMEOUT_S)
        self._server = self._thread = None

    def __enter__(self) -> ScriptedLlmServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def set_script(self, script: Script | Mapping[str, Any]) -> None:
        """Replace the whole script (validated) and restart fault counters."""
        self.state.replace(script if isinstance(script, Script) else Script.model_validate(script))

    def set_rules(
        self,
        rules: Sequence[Rule | Mapping[str, Any]],
        default: Reply | Mapping[str, Any] | None = None,
    ) -> None:
        """Replace the rules (and the default reply if given), keeping the other settings."""
        current = self.state.script
        update: dict[str, Any] = {"rules": [Rule.model_validate(r) for r in rules]}
        if default is not None:
            update["default"] = Reply.model_validate(default)
        self.state.replace(Script.model_validate({**dict(current), **update}))

    def requests(self, path: str | None = None) -> list[RecordedRequest]:
        """Requests received so far, optionally only those on `path` (e.g. `/v1/embeddings`)."""
        return [r for r in self.state.requests() if path is None or r.path == path]

    def clear_requests(self) -> None:
        """Forget the recorded requests."""
        self.state.clear_requests()

    def reset(self) -> None:
        """Back to the default script with an empty request log and slot meter."""
        self.state.replace(Script())
        self.state.clear_requests()
        self.gate.reset()

    def slot_stats(self) -> SlotStats:
        """Chat requests at once since the last reset (received, and holding a slot)."""
        return self.gate.stats()


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the fake LLM in the foreground until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default=LOCALHOST)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rules", type=Path, help="JSON file holding a Script")
    parser.add_argument("--quiet", action="store_true", help="no access log (benchmarks)")
    args = parser.parse_args(argv)
    script = Script.model_validate_json(args.rules.read_bytes()) if args.rules else None
    app = create_app(ScriptState(script))
    level = "warning" if args.quiet else "info"
    uvicorn.run(app, host=args.host, port=args.port, log_level=level, access_log=not args.quiet)


if __name__ == "__main__":
    main()
