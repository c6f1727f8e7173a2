"""The OpenAI-compatible face: knowledge bases as models, the knowledge chat as completions.

Any OpenAI client works with `base_url=<api>/v1` and an API key of ours as its key. Errors
under `/v1` take OpenAI's shape (see `api.errors`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from api.auth import PrincipalDep, requires
from api.deps import AppStateDep
from api.errors import OPENAI_PREFIX
from graphrag.auth.models import Capability
from graphrag.faces import openai_chat
from graphrag.faces.openai_schemas import CompletionRequest
from graphrag.faces.services import FaceServices

router = APIRouter(prefix=OPENAI_PREFIX, tags=["OpenAI-compatible"])

_STREAM_END = "data: [DONE]\n\n"


def _sse(chunks: Iterator[dict[str, Any]]) -> Iterator[str]:
    for chunk in chunks:
        yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"
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
    responses={200: {"content": {"text/event-stream": {}, "application/json": {}}}},
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
    completion = await run_in_threadpool(openai_chat.start_completion, services, principal, body)
    if body.stream:
        chunks = openai_chat.completion_chunks(services, completion)
        return StreamingResponse(_sse(chunks), media_type="text/event-stream")
    return await run_in_threadpool(openai_chat.complete, services, completion)
