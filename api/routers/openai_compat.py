"""The OpenAI-compatible face: knowledge bases as models, the knowledge chat as completions.

Any OpenAI client works with `base_url=<api>/v1` and an API key of ours as its key. Errors
under `/v1` take OpenAI's shape (see `api.errors`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter

from api.auth import PrincipalDep, requires
from api.deps import AppStateDep
from api.errors import OPENAI_PREFIX
from graphrag.auth.models import Capability
from graphrag.chat.service import UNEXPECTED_TURN_ERROR
from graphrag.errors import UnexpectedError
from graphrag.faces import openai_chat
from graphrag.faces.openai_schemas import CompletionRequest, openai_error
from graphrag.faces.services import FaceServices

router = APIRouter(prefix=OPENAI_PREFIX, tags=["OpenAI-compatible"])

_STREAM_END = "data: [DONE]\n\n"
_EVENT_STREAM = "text/event-stream"
log = logging.getLogger(__name__)


def _data(chunk: dict[str, Any]) -> str:
    return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"


def _sse(chunks: Iterator[dict[str, Any]]) -> Iterator[str]:
    """The chunks as SSE, then `[DONE]`. The turn ends itself with an error chunk on any
    exception; should anything escape it still, an error chunk and `[DONE]` end the stream
    all the same, never cut."""
    try:
        for chunk in chunks:
            yield _data(chunk)
    except Exception as exc:
        log.exception("completion stream failed", exc_info=exc)
        error = UnexpectedError(UNEXPECTED_TURN_ERROR)
        yield _data(openai_error(error.http_status, error.code, error.message))
    yield _STREAM_END


@router.get("/models", dependencies=[requires(Capability.READ)])
def list_models(state: AppStateDep, principal: PrincipalDep) -> dict[str, Any]:
    """The caller's knowledge bases, each listed as `kb/<name>` and as its id.

    Several bases are asked at once by joining model ids with `+` (`kb/a+kb/b`).
    """
    return openai_chat.list_models(state.face_services(), principal)


@router.post(
    "/chat/completions",
    dependencies=[requires(Capability.WRITE)],
    responses={200: {"content": {_EVENT_STREAM: {}, "application/json": {}}}},
)
async def chat_completions(
    body: CompletionRequest, state: AppStateDep, principal: PrincipalDep
) -> Any:
    """Answer the last user message over the model's knowledge bases (the knowledge chat).

    Earlier user/assistant messages are the history, system messages extra instructions; the
    answer cites passages as [n], listed in `references`. With `stream`, `chat.completion.chunk`
    events end with `data: [DONE]` (the first chunk carries `references`; `stream_options.
    include_usage` adds a usage chunk). Nothing is stored.
    """
    services: FaceServices = state.face_services()
    gate = state.chat_gate
    ticket = gate.enter(principal)  # 429 chat_busy past the key's chats at once
    streamed = False
    try:
        completion = await gate.run(openai_chat.start_completion, services, principal, body)
        if body.stream:
            chunks = openai_chat.completion_chunks(services, completion)
            streamed = True  # the response releases the ticket once sent
            return gate.stream(_sse(chunks), ticket, _EVENT_STREAM)
        return await gate.run(openai_chat.complete, services, completion)
    finally:
        if not streamed:
            ticket.release()
