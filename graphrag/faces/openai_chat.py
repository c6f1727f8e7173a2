"""The knowledge chat behind OpenAI's `/v1/models` and `/v1/chat/completions`.

A completion is one stateless knowledge-chat turn (`start_stateless_turn` + `run_chat`, the
functions the REST chat uses): the last user message is the question, earlier user and
assistant messages the history, system messages the caller's instructions. Nothing is stored.
The answer cites passages as `[n]`; `references` lists them.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from graphrag.auth.models import Capability, Principal
from graphrag.chat.schemas import (
    ChatEvent,
    ChatRequest,
    DeltaEvent,
    DoneEvent,
    ErrorEvent,
    ReferencesEvent,
)
from graphrag.chat.service import complete_turn, run_chat, start_stateless_turn
from graphrag.chat.turn import ChatTurn
from graphrag.db.engine import session_scope
from graphrag.errors import InvalidInputError
from graphrag.faces.model_ids import kb_models, resolve_model
from graphrag.faces.openai_schemas import CompletionRequest, MessageIn, openai_error
from graphrag.faces.services import FaceServices
from graphrag.llm.messages import ChatMessage
from graphrag.settings import FacesSettings

__all__ = [
    "Completion",
    "complete",
    "completion_chunks",
    "conversation",
    "list_models",
    "start_completion",
    "usage_of",
]

_COMPLETION_ID_BYTES = 12
_INSTRUCTION_ROLES = ("system", "developer")
_HISTORY_ROLES = ("user", "assistant")


def list_models(services: FaceServices, principal: Principal) -> dict[str, Any]:
    """The caller's knowledge bases as OpenAI models (needs `read`)."""
    tenant = principal.require(Capability.READ)
    with session_scope(services.chat.sessions) as session:
        models = kb_models(session, services.settings, tenant)
    owner = services.settings.faces.model_owner
    return {
        "object": "list",
        "data": [
            {
                "id": m.id,
                "object": "model",
                "created": m.created,
                "owned_by": owner,
                "kb_id": str(m.kb_id),
                "kb_name": m.name,
                "graph_on": m.graph_on,
            }
            for m in models
        ],
    }


@dataclass
class Completion:
    """A started completion: the turn and what its answer's envelope needs."""

    request: CompletionRequest
    turn: ChatTurn
    id: str = field(default_factory=lambda: f"chatcmpl-{secrets.token_hex(_COMPLETION_ID_BYTES)}")
    created: int = field(default_factory=lambda: int(time.time()))


def _text(message: MessageIn) -> str:
    if message.content is None or isinstance(message.content, str):
        return message.content or ""
    if any(part.type != "text" for part in message.content):
        raise InvalidInputError("only text content can be answered", param="messages")
    return "\n".join(part.text or "" for part in message.content)


def conversation(
    request: CompletionRequest, faces: FacesSettings
) -> tuple[str, list[ChatMessage], str]:
    """(question, history, instructions) of the request's messages: the last one must be the
    user's question; earlier user and assistant messages are the history, system and
    developer messages the instructions (at most `faces.max_system_chars` together); tool
    messages are left out."""
    texts = [_text(m) for m in request.messages]
    max_chars = faces.max_conversation_chars
    if sum(len(t) for t in texts) > max_chars:
        raise InvalidInputError(f"the messages exceed {max_chars} characters", param="messages")
    last = request.messages[-1]
    if last.role != "user" or not texts[-1].strip():
        raise InvalidInputError("the last message must be the user's question", param="messages")
    earlier = list(zip(request.messages[:-1], texts[:-1], strict=True))
    history = [
        ChatMessage(role="user" if m.role == "user" else "assistant", content=t)
        for m, t in earlier
        if m.role in _HISTORY_ROLES
    ]
    instructions = "\n".join(t for m, t in earlier if m.role in _INSTRUCTION_ROLES and t.strip())
    if len(instructions) > faces.max_system_chars:
        raise InvalidInputError(
            f"the system messages exceed {faces.max_system_chars} characters", param="messages"
        )
    return texts[-1], history, instructions


def start_completion(
    services: FaceServices, principal: Principal, request: CompletionRequest
) -> Completion:
    """Check the caller (`write`, as the knowledge chat), the model and the messages."""
    tenant = principal.require(Capability.WRITE)
    question, history, instructions = conversation(request, services.settings.faces)
    with session_scope(services.chat.sessions) as session:
        kb_ids = resolve_model(session, services.settings, tenant, request.model)
    chat_request = ChatRequest(
        query=question,
        kb_ids=kb_ids,
        knowledge_ids=request.knowledge_ids,
        use_graph=request.use_graph,
    )
    turn = start_stateless_turn(services.chat, tenant, chat_request, history, instructions)
    return Completion(request=request, turn=turn)


def usage_of(turn: ChatTurn, chars_per_token: float) -> dict[str, int]:
    """The turn's token counts as the LLM server reported them (summed over its calls, as in
    the chat's `done` event), or an estimate from characters when it reported none."""
    usage = turn.usage.public()
    if usage is not None:
        prompt, answer = usage.prompt_tokens, usage.completion_tokens
    else:
        prompt = math.ceil(sum(len(m.content) for m in turn.messages) / chars_per_token)
        answer = math.ceil(len(turn.answer) / chars_per_token)
    return {"prompt_tokens": prompt, "completion_tokens": answer, "total_tokens": prompt + answer}


def _references(turn: ChatTurn) -> list[dict[str, Any]]:
    return [r.model_dump(mode="json") for r in turn.references]


def _chunk(completion: Completion, choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "id": completion.id,
        "object": "chat.completion.chunk",
        "created": completion.created,
        "model": completion.request.model,
        "choices": choices,
        **extra,
    }


def _delta(delta: dict[str, Any], finish_reason: str | None = None) -> list[dict[str, Any]]:
    return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]


def _event_chunks(
    services: FaceServices, completion: Completion, event: ChatEvent
) -> Iterator[dict[str, Any]]:
    turn, data = completion.turn, event.data
    if isinstance(data, ReferencesEvent):
        role = _delta({"role": "assistant", "content": ""})
        yield _chunk(completion, role, references=_references(turn), entities=turn.entities)
    elif isinstance(data, DeltaEvent):
        yield _chunk(completion, _delta({"content": data.content}))
    elif isinstance(data, DoneEvent):
        yield _chunk(completion, _delta({}, "stop"))
        if completion.request.include_usage:
            usage = usage_of(turn, services.settings.faces.chars_per_token)
            yield _chunk(completion, [], usage=usage)
    elif isinstance(data, ErrorEvent) and turn.failure is not None:
        yield openai_error(turn.failure.http_status, data.code, data.message)


def completion_chunks(services: FaceServices, completion: Completion) -> Iterator[dict[str, Any]]:
    """The streamed answer as `chat.completion.chunk` objects: the first carries `references`,
    then content deltas, a `stop` chunk and, when asked for, a usage chunk; a failure (the LLM,
    the embedder, the graph) ends the stream with an error object, with its code, instead."""
    for event in run_chat(services.chat, completion.turn):
        yield from _event_chunks(services, completion, event)


def complete(services: FaceServices, completion: Completion) -> dict[str, Any]:
    """The whole answer as one `chat.completion`; a failure of the turn is raised again (the
    LLM down is a 503, a request it refused a 502...)."""
    turn = completion.turn
    complete_turn(services.chat, turn)
    if turn.failure is not None:
        raise turn.failure
    return {
        "id": completion.id,
        "object": "chat.completion",
        "created": completion.created,
        "model": completion.request.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": turn.answer},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": usage_of(turn, services.settings.faces.chars_per_token),
        "references": _references(turn),
        "entities": turn.entities,
    }
