"""The OpenAI-compatible chat client for the local llama.cpp server."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, cast

import httpx
import openai
from openai import OpenAI, Stream
from openai.types.chat import ChatCompletionChunk
from pydantic import BaseModel, Field, ValidationError

from graphrag.errors import LlmRequestError, LlmUnavailableError
from graphrag.llm.concurrency import LeaseSemaphore
from graphrag.llm.messages import ChatMessage, WireToolCall
from graphrag.metrics import LlmMetrics
from graphrag.settings import LlmSettings
from graphrag.value_model import ValueModel

__all__ = ["LlmClient", "LlmReply", "TokenUsage", "ToolReply"]

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


@dataclass
class TokenUsage:
    """Token counts of one completion as the LLM server reported them (None: not reported).

    The one usage type of a call: plain completions, tool completions and streams all carry it;
    sums over several calls (a chat turn, a document) are built from it.
    """

    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def reported(self) -> bool:
        """Whether the server sent any count."""
        return self.prompt_tokens is not None or self.completion_tokens is not None


class LlmReply:
    """The text of a completion, why it stopped, and what it cost (the server's `usage`)."""

    def __init__(
        self,
        content: str,
        finish_reason: str | None,
        *,
        usage: TokenUsage | None = None,
        seconds: float = 0.0,
    ) -> None:
        self.content = content
        self.finish_reason = finish_reason
        self.usage = usage or TokenUsage()
        self.seconds = seconds


class ToolReply(ValueModel):
    """A completion that may ask for tools: its text, why it stopped, its native calls, and
    the server's token counts (None: not reported)."""

    content: str
    finish_reason: str | None
    tool_calls: list[WireToolCall] = Field(default_factory=list)
    usage: TokenUsage = Field(default_factory=TokenUsage)


class _CompletionMessage(BaseModel):
    content: str | None = None


class _CompletionChoice(BaseModel):
    message: _CompletionMessage = Field(default_factory=_CompletionMessage)
    finish_reason: str | None = None


class _Completion(BaseModel):
    """What `complete` reads of a chat completion; anything else in the body is ignored."""

    choices: list[_CompletionChoice] = Field(default_factory=list)
    usage: TokenUsage | None = None


def _fold_system(wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Without a system role, the system text leads the first user turn."""
    system = "\n\n".join(m["content"] for m in wire if m["role"] == "system")
    rest = [m for m in wire if m["role"] != "system"]
    if system:
        first_user = next((m for m in rest if m["role"] == "user"), None)
        if first_user is None:
            rest.insert(0, {"role": "user", "content": system})
        else:
            first_user["content"] = f"{system}\n\n{first_user['content']}"
    return rest


class LlmClient:
    """Chat completions with fixed options (temperature, max tokens, thinking off), every call
    behind the process's shared concurrency limit if it has one: the background slots in a
    worker, the interactive slots in the API and the CLI."""

    def __init__(
        self,
        settings: LlmSettings,
        limiter: LeaseSemaphore | None = None,
        metrics: LlmMetrics | None = None,
    ) -> None:
        self.settings = settings
        self.limiter = limiter
        self.metrics = metrics
        self._client = OpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key.get_secret_value(),
            timeout=settings.timeout_s,
            # No client retries: background calls are retried by their task, with backoff (a retry
            # here would multiply with those), and a failed interactive call is reported at once.
            max_retries=0,
        )

    def _slot(self) -> AbstractContextManager[None]:
        return self.limiter.slot() if self.limiter is not None else nullcontext()

    def _wire(self, messages: list[ChatMessage]) -> list[dict[str, Any]]:
        """Messages as sent; without a system role, system text leads the first user turn."""
        wire = [m.wire() for m in messages]
        return wire if self.settings.system_role else _fold_system(wire)

    def stream(
        self,
        messages: list[ChatMessage],
        max_tokens: int | None = None,
        usage: TokenUsage | None = None,
    ) -> Iterator[str]:
        """Text deltas of a streamed completion; the slot is held until the stream ends.

        With `usage`, the server is asked for its token counts, written there if it sends them
        (servers that do not know the option ignore it).
        """
        options: dict[str, Any] = {}
        if usage is not None:
            options["stream_options"] = {"include_usage": True}
        with self._slot():
            yield from self._stream(messages, max_tokens, usage, options)

    def _stream(
        self,
        messages: list[ChatMessage],
        max_tokens: int | None,
        usage: TokenUsage | None,
        options: dict[str, Any],
    ) -> Iterator[str]:
        try:
            chunks = self._client.chat.completions.create(
                model=self.settings.model,
                messages=self._wire(messages),  # type: ignore[arg-type]  # plain role dicts
                temperature=self.settings.temperature,
                max_tokens=max_tokens or self.settings.max_tokens,
                stream=True,
                extra_body={"chat_template_kwargs": {"enable_thinking": False}},
                **options,
            )
            for chunk in cast("Stream[ChatCompletionChunk]", chunks):
                if usage is not None and chunk.usage is not None:
                    usage.prompt_tokens = chunk.usage.prompt_tokens
                    usage.completion_tokens = chunk.usage.completion_tokens
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content
        except _TRANSIENT as exc:
            raise LlmUnavailableError(f"LLM call failed: {exc}", model=self.settings.model) from exc
        except openai.APIStatusError as exc:
            raise self._refused(exc) from exc

    def _refused(self, exc: openai.APIStatusError) -> LlmRequestError:
        """A 4xx of the server (the prompt over its context, say): the same request fails
        again, so it is not worth a retry."""
        return LlmRequestError(
            f"LLM refused the request ({exc.status_code}): {exc.message}",
            model=self.settings.model,
        )

    def complete(
        self,
        messages: list[ChatMessage],
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> LlmReply:
        """One non-streamed completion of at most `max_tokens` (default: `llm.max_tokens`) at
        `temperature` (default: `llm.temperature`); transport and server faults raise
        LlmUnavailableError."""
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": self._wire(messages),
            "temperature": self.settings.temperature if temperature is None else temperature,
            "max_tokens": max_tokens or self.settings.max_tokens,
            "chat_template_kwargs": {"enable_thinking": False},
        }
        if response_format is not None and self.settings.json_schema:
            body["response_format"] = response_format
        with self._slot(), self._measured() as started:
            try:
                # The body as built, and the answer read as JSON: the SDK's request transform and
                # response models cost more CPU than the rest of a graph task's call.
                response = self._client.post("/chat/completions", body=body, cast_to=httpx.Response)
                completion = _Completion.model_validate_json(response.content)
            except (*_TRANSIENT, ValidationError) as exc:
                raise LlmUnavailableError(
                    f"LLM call failed: {exc}", model=self.settings.model
                ) from exc
            except openai.APIStatusError as exc:
                raise self._refused(exc) from exc
            seconds = time.monotonic() - started
        if not completion.choices:
            raise LlmUnavailableError("LLM answered without a choice", model=self.settings.model)
        choice = completion.choices[0]
        reply = LlmReply(
            choice.message.content or "",
            choice.finish_reason,
            usage=completion.usage,
            seconds=seconds,
        )
        self._count_tokens(reply)
        return reply

    @contextmanager
    def _measured(self) -> Iterator[float]:
        """Time one request (after its slot was granted) into the latency and outcome series."""
        started = time.monotonic()
        if self.metrics is None:
            yield started
            return
        model, metrics = self.settings.model, self.metrics
        metrics.in_flight.labels(model).inc()
        outcome = "error"
        try:
            yield started
            outcome = "ok"
        finally:
            metrics.in_flight.labels(model).dec()
            metrics.latency.labels(model).observe(time.monotonic() - started)
            metrics.requests.labels(model, outcome).inc()

    def _count_tokens(self, reply: LlmReply) -> None:
        if self.metrics is not None:
            tokens = self.metrics.tokens
            tokens.labels(self.settings.model, "prompt").inc(reply.usage.prompt_tokens or 0)
            tokens.labels(self.settings.model, "completion").inc(reply.usage.completion_tokens or 0)

    def complete_tools(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]], max_tokens: int
    ) -> ToolReply:
        """One interactive completion offering `tools` (none: a plain answer is asked for).

        Native tool calls come back parsed into name and raw arguments; calls written in the
        text are the caller's to read.
        """
        extra: dict[str, Any] = {"chat_template_kwargs": {"enable_thinking": False}}
        if tools:
            extra["tools"] = tools
        with self._slot():
            try:
                completion = self._client.chat.completions.create(
                    model=self.settings.model,
                    messages=self._wire(messages),  # type: ignore[arg-type]  # plain role dicts
                    temperature=self.settings.temperature,
                    max_tokens=max_tokens,
                    extra_body=extra,
                )
            except _TRANSIENT as exc:
                raise LlmUnavailableError(
                    f"LLM call failed: {exc}", model=self.settings.model
                ) from exc
            except openai.APIStatusError as exc:
                raise self._refused(exc) from exc
        if not completion.choices:
            raise LlmUnavailableError("LLM answered without a choice", model=self.settings.model)
        choice = completion.choices[0]
        calls = [
            WireToolCall(id=call.id, name=call.function.name, arguments=call.function.arguments)
            for call in choice.message.tool_calls or []
            if call.type == "function"
        ]
        usage = completion.usage
        return ToolReply(
            content=choice.message.content or "",
            finish_reason=choice.finish_reason,
            tool_calls=calls,
            usage=TokenUsage(usage.prompt_tokens, usage.completion_tokens)
            if usage
            else TokenUsage(),
        )
