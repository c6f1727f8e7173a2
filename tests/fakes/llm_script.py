"""The script of the fake LLM server: typed rules, matching, fault counting and request log.

A `Script` holds ordered `Rule`s; the first rule whose `RuleMatch` accepts a request answers
it, else the script's `default` reply does. A rule may carry a `Fault`, applied to its first
`times` matching calls only (all of them when `times` is unset), which lets a test check that a
client retries and then succeeds.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

__all__ = [
    "DEFAULT_EMBEDDING_DIM",
    "DEFAULT_MODEL",
    "Choice",
    "Endpoint",
    "Fault",
    "RecordedRequest",
    "Reply",
    "Rule",
    "RuleMatch",
    "Script",
    "ScriptState",
    "TextMatch",
    "ToolCallReply",
]

DEFAULT_EMBEDDING_DIM = 384  # all-MiniLM-L6-v2's width, the project's local embedder
DEFAULT_MODEL = "scripted-llm"
DEFAULT_STREAM_PIECE_CHARS = 12  # content characters per SSE chunk
DEFAULT_CONTEXT_TOKENS = 4096  # the context a context-overflow fault reports

Endpoint = Literal["chat", "embeddings"]


class _Strict(BaseModel):
    """Frozen, and refuses unknown keys so a typo in a rules file fails at load time."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class TextMatch(_Strict):
    """Accepts a text that contains `contains` and/or where `regex` is found (both if both)."""

    contains: str | None = None
    regex: str | None = None

    @field_validator("regex")
    @classmethod
    def _regex_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"invalid regex {value!r}: {exc}") from exc
        return value

    @model_validator(mode="after")
    def _not_empty(self) -> TextMatch:
        if self.contains is None and self.regex is None:
            raise ValueError("a text match needs `contains` or `regex`")
        return self

    def accepts(self, text: str | None) -> bool:
        """Whether `text` satisfies every condition given (a missing text never does)."""
        if text is None:
            return False
        if self.contains is not None and self.contains not in text:
            return False
        return self.regex is None or re.search(self.regex, text) is not None


class RuleMatch(_Strict):
    """Conditions on one request; all given ones must hold, none given matches everything."""

    endpoint: Endpoint = "chat"
    user: TextMatch | None = None  # last user message (embeddings: the inputs, one per line)
    system: TextMatch | None = None  # system message(s), joined
    model: TextMatch | None = None
    image: bool | None = None  # True: the last user message carries an image (vision); False: none
    prompt: TextMatch | None = None  # every message's text, joined (chat only)

    def accepts(
        self,
        endpoint: Endpoint,
        user: str | None,
        system: str | None,
        model: str,
        *,
        images: int = 0,
        prompt: str | None = None,
    ) -> bool:
        """Whether a request with these parts (and `images` images in its last user message,
        `prompt` the text of all its messages) matches."""
        checks = (
            (self.user, user),
            (self.system, system),
            (self.model, model),
            (self.prompt, prompt),
        )
        if self.image is not None and self.image != (images > 0):
            return False
        return endpoint == self.endpoint and all(m is None or m.accepts(t) for m, t in checks)


class ToolCallReply(_Strict):
    """One function call the fake model asks for."""

    name: str
    arguments: dict[str, JsonValue] | str = Field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        """Arguments as the JSON string OpenAI puts on the wire."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


class Reply(_Strict):
    """What the fake model says: text, a JSON value sent as its text, and/or tool calls."""

    content: str | dict[str, JsonValue] | list[JsonValue] | None = None
    tool_calls: list[ToolCallReply] | None = None

    def text(self) -> str | None:
        """The content as the string the client receives."""
        if self.content is None or isinstance(self.content, str):
            return self.content
        return json.dumps(self.content)


class Fault(_Strict):
    """Ways to misbehave; applied in order delay, dropped connection, context overflow, status,
    malformed JSON, truncation, then the pace of a streamed reply."""

    delay_s: float | None = Field(default=None, ge=0)
    # A streamed reply waits this long before each of its events, as a slow model's tokens do.
    piece_delay_s: float | None = Field(default=None, ge=0)
    drop_connection: bool = False  # close the connection without a byte of answer
    # Answer 400 as llama.cpp does when the prompt is over its context (`n_ctx` tokens).
    context_overflow: bool = False
    context_tokens: int = Field(default=DEFAULT_CONTEXT_TOKENS, ge=1)
    status: int | None = Field(default=None, ge=400, le=599)
    retry_after_ms: int | None = Field(default=None, ge=0)  # header sent with `status`
    malformed_json: bool = False
    truncate: int | None = Field(default=None, ge=0)  # keep N characters, finish "length"
    times: int | None = Field(default=None, ge=1)  # first N matching calls only


class Rule(_Strict):
    """A scripted answer for the requests its `match` accepts."""

    name: str | None = None
    match: RuleMatch = Field(default_factory=RuleMatch)
    reply: Reply = Field(default_factory=lambda: Reply(content=""))
    fault: Fault | None = None


class Script(_Strict):
    """The whole behaviour of the fake server; replaced atomically by `PUT /_script`."""

    rules: list[Rule] = Field(default_factory=list)
    default: Reply = Field(default_factory=lambda: Reply(content="OK"))
    embedding_dim: int = Field(default=DEFAULT_EMBEDDING_DIM, ge=1)
    models: list[str] = Field(default_factory=lambda: [DEFAULT_MODEL], min_length=1)
    stream_piece_chars: int = Field(default=DEFAULT_STREAM_PIECE_CHARS, ge=1)
    # Chat requests served at once, as llama.cpp's --parallel (`GET /props` reports it; None:
    # unlimited, and `/props` answers 404 like servers that do not describe themselves).
    slots: int | None = Field(default=None, ge=1)
    latency_s: float = Field(default=0.0, ge=0)  # every chat answer holds its slot this long
    # Embedding inputs it accepts get an all-zero vector, as some servers answer for stop words.
    zero_embeddings: TextMatch | None = None


class RecordedRequest(_Strict):
    """One request received on an OpenAI endpoint."""

    method: str
    path: str
    body: JsonValue = None
    usage: dict[str, int] | None = None  # what a chat answer reported it cost


class Choice(_Strict):
    """The outcome of matching: the reply, the fault in force (if any), the rule's name."""

    reply: Reply
    fault: Fault | None = None
    rule: str | None = None


class ScriptState:
    """The live script, per-rule hit counters and the request log, safe across threads."""

    def __init__(self, script: Script | None = None) -> None:
        self._lock = threading.Lock()
        self._script = script or Script()
        self._hits = [0] * len(self._script.rules)
        self._requests: list[RecordedRequest] = []

    @property
    def script(self) -> Script:
        """The script in force."""
        with self._lock:
            return self._script

    def replace(self, script: Script) -> None:
        """Install a new script and restart fault counting."""
        with self._lock:
            self._script = script
            self._hits = [0] * len(script.rules)

    def choose(
        self,
        endpoint: Endpoint,
        user: str | None,
        system: str | None,
        model: str,
        *,
        images: int = 0,
        prompt: str | None = None,
    ) -> Choice:
        """First matching rule's reply, with its fault while its `times` budget lasts."""
        with self._lock:
            for index, rule in enumerate(self._script.rules):
                if not rule.match.accepts(
                    endpoint, user, system, model, images=images, prompt=prompt
                ):
                    continue
                self._hits[index] += 1
                fault = rule.fault
                spent = (
                    fault is not None
                    and fault.times is not None
                    and self._hits[index] > fault.times
                )
                if spent:
                    fault = None
                return Choice(reply=rule.reply, fault=fault, rule=rule.name)
            return Choice(reply=self._script.default)

    def record(self, method: str, path: str, body: Any) -> int:
        """Append one received request to the log; its index in the log."""
        with self._lock:
            self._requests.append(RecordedRequest(method=method, path=path, body=body))
            return len(self._requests) - 1

    def record_usage(self, index: int, usage: dict[str, int]) -> None:
        """Attach the usage an answer reported to its request (if the log was not cleared)."""
        with self._lock:
            if index < len(self._requests):
                entry = self._requests[index]
                self._requests[index] = entry.model_copy(update={"usage": usage})

    def requests(self) -> list[RecordedRequest]:
        """A copy of the log, oldest first."""
        with self._lock:
            return list(self._requests)

    def clear_requests(self) -> None:
        """Empty the log."""
        with self._lock:
            self._requests.clear()
