"""The OpenAI-compatible chat client for the local llama.cpp server."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Any, cast

import httpx
import openai
from openai import OpenAI, Stream
from openai.types.chat import ChatCompletionChunk

from graphrag.errors import LlmUnavailableError
from graphrag.llm.concurrency import LeaseSemaphore
from graphrag.llm.prompts import ChatMessage
from graphrag.settings import LlmSettings

__all__ = ["LlmClient", "LlmReply"]

log = logging.getLogger(__name__)

# What the transport or server did wrong (not the model's words): worth another try later.
_TRANSIENT = (
    openai.APIConnectionError,
    openai.APITimeoutError,
    openai.InternalServerError,
    openai.RateLimitError,
    openai.APIResponseValidationError,
    httpx.HTTPError,
    json.JSONDecodeError,
)


class LlmReply:
    """The text of a completion and why it stopped."""

    def __init__(self, content: str, finish_reason: str | None) -> None:
        self.content = content
        self.finish_reason = finish_reason


class LlmClient:
    """Chat completions with the extraction call's fixed options (temperature, max tokens,
    thinking off), behind an optional shared concurrency limit."""

    def __init__(self, settings: LlmSettings, limiter: LeaseSemaphore | None = None) -> None:
        self.settings = settings
        self.limiter = limiter
        self._client = OpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key.get_secret_value(),
            timeout=settings.timeout_s,
            max_retries=0,  # retries belong to the task queue, with backoff
        )

    def _slot(self) -> AbstractContextManager[None]:
        return self.limiter.slot() if self.limiter is not None else nullcontext()

    def _wire(self, messages: list[ChatMessage]) -> list[dict[str, str]]:
        """Messages as sent; without a system role, system text leads the first user turn."""
        if self.settings.system_role:
            return [m.model_dump() for m in messages]
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        wire = [m.model_dump() for m in messages if m.role != "system"]
        if system:
            first_user = next((m for m in wire if m["role"] == "user"), None)
            if first_user is None:
                wire.insert(0, {"role": "user", "content": system})
            else:
                first_user["content"] = f"{system}\n\n{first_user['content']}"
        return wire

    def stream(
        self, messages: list[ChatMessage], max_tokens: int | None = None
    ) -> Iterator[str]:
        """Text deltas of a streamed completion (interactive: no background slot is taken)."""
        try:
            chunks = self._client.chat.completions.create(
                model=self.settings.model,
                messages=self._wire(messages),  # type: ignore[arg-type]  # plain role dicts
                temperature=self.settings.temperature,
                max_tokens=max_tokens or self.settings.max_tokens,
                stream=True,
                extra_body={"chat_template_kwargs": {"enable_thinking": False}},
            )
            for chunk in cast("Stream[ChatCompletionChunk]", chunks):
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content
        except _TRANSIENT as exc:
            raise LlmUnavailableError(f"LLM call failed: {exc}", model=self.settings.model) from exc

    def complete(
        self, messages: list[ChatMessage], response_format: dict[str, Any] | None = None
    ) -> LlmReply:
        """One non-streamed completion; transport and server faults raise LlmUnavailableError."""
        extra: dict[str, Any] = {"chat_template_kwargs": {"enable_thinking": False}}
        if response_format is not None and self.settings.json_schema:
            extra["response_format"] = response_format
        with self._slot():
            try:
                completion = self._client.chat.completions.create(
                    model=self.settings.model,
                    messages=self._wire(messages),  # type: ignore[arg-type]  # plain role dicts
                    temperature=self.settings.temperature,
                    max_tokens=self.settings.max_tokens,
                    extra_body=extra,
                )
            except _TRANSIENT as exc:
                raise LlmUnavailableError(
                    f"LLM call failed: {exc}", model=self.settings.model
                ) from exc
        if not completion.choices:
            raise LlmUnavailableError("LLM answered without a choice", model=self.settings.model)
        choice = completion.choices[0]
        return LlmReply(choice.message.content or "", choice.finish_reason)
