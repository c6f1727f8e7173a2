"""OpenAI wire format for the fake server: completions, stream chunks, embeddings, errors.

Pure functions from a scripted `Reply` (or texts) to the JSON the `openai` client expects.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tests.fakes.llm_script import Reply

__all__ = [
    "CONTEXT_OVERFLOW_STATUS",
    "MALFORMED_JSON",
    "chat_completion",
    "chat_stream_events",
    "completion_usage",
    "context_overflow_body",
    "embedding_vector",
    "embeddings_response",
    "error_body",
    "models_response",
]

# Cut in the middle of a string value: no JSON parser accepts it.
MALFORMED_JSON = '{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"mess'
_SEED_BYTES = 8  # bytes of the text's digest seeding its vector
CONTEXT_OVERFLOW_STATUS = 400  # what llama.cpp's server answers a prompt over its context


def _token_count(text: str | None) -> int:
    """A rough token count (whitespace words): enough for usage fields."""
    return len(text.split()) if text else 0


def completion_usage(prompt: str, completion: str | None) -> dict[str, int]:
    """The `usage` object of a completion: whitespace words of the prompt and of the answer."""
    prompt_tokens, completion_tokens = _token_count(prompt), _token_count(completion)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _tool_calls(reply: Reply, call_id: str) -> list[dict[str, Any]]:
    return [
        {
            "id": call.id or f"call_{call_id}_{index}",
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments_json()},
        }
        for index, call in enumerate(reply.tool_calls or [])
    ]


def _finish_reason(reply: Reply, truncated: bool) -> str:
    if truncated:
        return "length"
    return "tool_calls" if reply.tool_calls else "stop"


def chat_completion(
    reply: Reply, text: str | None, *, model: str, call_id: str, prompt: str, truncated: bool
) -> dict[str, Any]:
    """A `chat.completion` object answering with `text` (the possibly cut reply content)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls(reply, call_id)
    return {
        "id": f"chatcmpl-{call_id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": _finish_reason(reply, truncated),
            }
        ],
        "usage": completion_usage(prompt, text),
    }


def _chunk(call_id: str, model: str, created: int, choices: list[dict[str, Any]]) -> str:
    body = {
        "id": f"chatcmpl-{call_id}",
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": choices,
    }
    return f"data: {json.dumps(body)}\n\n"


def _delta(delta: dict[str, Any], finish_reason: str | None = None) -> list[dict[str, Any]]:
    return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]


def chat_stream_events(
    reply: Reply,
    text: str | None,
    *,
    model: str,
    call_id: str,
    truncated: bool,
    piece_chars: int,
    usage: dict[str, int] | None,
) -> Iterator[str]:
    """Server-sent events of a streamed completion, ending with `data: [DONE]` (preceded by a
    usage chunk when `usage` is given)."""
    created = int(time.time())
    yield _chunk(call_id, model, created, _delta({"role": "assistant", "content": ""}))
    for start in range(0, len(text or ""), piece_chars):
        piece = (text or "")[start : start + piece_chars]
        yield _chunk(call_id, model, created, _delta({"content": piece}))
    for index, call in enumerate(_tool_calls(reply, call_id)):
        # Name first, then the arguments as a separate fragment, as OpenAI streams them.
        name = call["function"]["name"]
        head = {**call, "index": index, "function": {"name": name, "arguments": ""}}
        yield _chunk(call_id, model, created, _delta({"tool_calls": [head]}))
        tail = {"index": index, "function": {"arguments": call["function"]["arguments"]}}
        yield _chunk(call_id, model, created, _delta({"tool_calls": [tail]}))
    yield _chunk(call_id, model, created, _delta({}, _finish_reason(reply, truncated)))
    if usage is not None:
        body = json.dumps(
            {
                "id": f"chatcmpl-{call_id}",
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": usage,
            }
        )
        yield f"data: {body}\n\n"
    yield "data: [DONE]\n\n"


def embedding_vector(text: str, dim: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    """A unit vector of width `dim` that depends only on `text` (its SHA-256 seeds it)."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:_SEED_BYTES], "big")
    vector = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    normalised: np.ndarray[Any, np.dtype[np.float32]] = vector / np.linalg.norm(vector)
    return normalised


def embeddings_response(
    texts: list[str],
    *,
    model: str,
    dim: int,
    encoding_format: str,
    zero: Callable[[str], bool] | None = None,
) -> dict[str, Any]:
    """An embeddings `list`; `base64` packs little-endian float32 as the `openai` client reads.
    A text `zero` accepts gets an all-zero vector."""
    data: list[dict[str, Any]] = []
    for index, text in enumerate(texts):
        zeroed = zero is not None and zero(text)
        vector = np.zeros(dim, dtype=np.float32) if zeroed else embedding_vector(text, dim)
        encoded: str | list[float] = (
            base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
            if encoding_format == "base64"
            else [float(x) for x in vector]
        )
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    tokens = sum(_token_count(text) for text in texts)
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def models_response(models: list[str]) -> dict[str, Any]:
    """The `GET /v1/models` list."""
    return {
        "object": "list",
        "data": [
            {"id": name, "object": "model", "created": 0, "owned_by": "scripted"} for name in models
        ],
    }


def error_body(status: int, message: str) -> dict[str, Any]:
    """An OpenAI-style error object."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": str(status)}}


def context_overflow_body(prompt: str, context_tokens: int) -> dict[str, Any]:
    """The error llama.cpp's server sends when the prompt does not fit in its context."""
    return {
        "error": {
            "code": CONTEXT_OVERFLOW_STATUS,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": _token_count(prompt),
            "n_ctx": context_tokens,
        }
    }
