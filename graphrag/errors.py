"""The error tree of the backend. The API maps each class to its HTTP status and stable code.

GraphragError
├── UnexpectedError          500 internal_error (any other exception, e.g. ending a chat stream)
├── NotFoundError            404 not_found
│   ├── UnknownModelError        404 model_not_found (a /v1 model id names no base)
│   └── EntityNotFoundError      404 entity_not_found (no document node of that name key)
├── ConflictError            409 conflict
│   └── DuplicateDocumentError   409 duplicate_document
├── InvalidInputError        422 invalid_input
│   ├── EmptyFileError           422 empty_file
│   ├── UrlTargetRefusedError    422 url_target_refused (a private, loopback or reserved address)
│   └── UrlFetchError            422 url_fetch_failed (the site failed, answered 4xx/5xx, looped)
│       ├── UrlFetchTimeoutError     422 url_fetch_timeout (the fetch's total deadline passed)
│       └── UrlEncodingRefusedError  422 url_encoding_refused (stacked or unknown content codings)
├── FileTooLargeError        413 file_too_large
├── UnsupportedMediaError    415 unsupported_media_type
├── ForbiddenError           403 forbidden
│   └── OwnerForbiddenError      403 owner_forbidden (a key asked for another memory owner)
├── RateLimitedError         429 rate_limited (with Retry-After)
│   ├── UrlImportBusyError       429 url_import_busy (URL imports at once at their cap; Retry-After)
│   └── ChatBusyError            429 chat_busy (the key's chats at once at their cap; Retry-After)
├── UnauthorizedError        401 unauthorized
├── GraphDisabledError       503 graph_disabled (NEO4J_ENABLE is off on this server)
│   ├── GraphNotEnabledForKbError 503 kb_graph_disabled (this base's own graph switch is off)
│   └── ArchivalMemoryDisabledError 503 archival_memory_disabled (archival facts need Neo4j)
├── ServiceUnavailableError  503 service_unavailable
│   ├── BrokerUnavailableError   503 broker_unavailable (the relay keeps the rows for later)
│   ├── GraphStoreError          503 graph_store_error
│   │   └── GraphSearchTimeoutError  503 graph_search_timeout (the name scan past its budget)
│   └── LlmUnavailableError      503 llm_unavailable
│       └── LlmBusyError             503 llm_busy (no LLM slot freed in time; with Retry-After)
├── EmbeddingError           502 embedding_failed (model missing or mismatched, server error)
├── LlmRequestError          502 llm_request_rejected (the LLM refused the request: 4xx)
├── GraphDataError           500 graph_data_rejected (Neo4j refused the data: not worth a retry)
├── PromptError              500 prompt_error (a prompt template is broken or misused)
│   ├── PromptTemplateError      500 prompt_template_invalid
│   └── PromptRenderError        500 prompt_render_failed
└── ParseError               document-level failure, stored on the document (not an HTTP answer)
    ├── CorruptFileError
    ├── EncryptedFileError
    └── DecodeBudgetError    the file would take more memory or work than the budgets allow
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "ArchivalMemoryDisabledError",
    "BrokerUnavailableError",
    "ChatBusyError",
    "ConflictError",
    "CorruptFileError",
    "DecodeBudgetError",
    "DuplicateDocumentError",
    "EmbeddingError",
    "EmptyFileError",
    "EncryptedFileError",
    "EntityNotFoundError",
    "EvalSetInvalidError",
    "ExtractOverrideError",
    "FileTooLargeError",
    "ForbiddenError",
    "GraphDataError",
    "GraphDisabledError",
    "GraphNotEnabledForKbError",
    "GraphSearchTimeoutError",
    "GraphStoreError",
    "GraphragError",
    "InvalidInputError",
    "LlmBusyError",
    "LlmRequestError",
    "LlmUnavailableError",
    "NotFoundError",
    "OwnerForbiddenError",
    "ParseError",
    "PromptError",
    "PromptRenderError",
    "PromptTemplateError",
    "RateLimitedError",
    "ServiceUnavailableError",
    "UnauthorizedError",
    "UnexpectedError",
    "UnknownModelError",
    "UnsupportedMediaError",
    "UrlEncodingRefusedError",
    "UrlFetchError",
    "UrlFetchTimeoutError",
    "UrlImportBusyError",
    "UrlTargetRefusedError",
]


class GraphragError(Exception):
    """Root of every error the backend raises on purpose."""

    code: ClassVar[str] = "internal_error"
    http_status: ClassVar[int] = 500
    # Seconds after which the same request may succeed (sent as Retry-After); None: unknown.
    retry_after_s: int | None = None

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class UnexpectedError(GraphragError):
    """Any exception that is not one of ours (a database timeout, a driver's own error), where
    it must still be reported by its code: in the `error` event that ends a chat stream. The
    message names no internals; the cause is logged."""


class NotFoundError(GraphragError):
    code = "not_found"
    http_status = 404


class UnknownModelError(NotFoundError):
    """A model id of the OpenAI-compatible face names no knowledge base of the caller."""

    code = "model_not_found"


class EntityNotFoundError(NotFoundError):
    """No document node of the base has the entity name key a resolution route names."""

    code = "entity_not_found"


class ConflictError(GraphragError):
    code = "conflict"
    http_status = 409


class DuplicateDocumentError(ConflictError):
    code = "duplicate_document"


class InvalidInputError(GraphragError):
    code = "invalid_input"
    http_status = 422


class ExtractOverrideError(InvalidInputError):
    """A document's extraction settings cannot apply over its base's."""

    code = "extract_override_invalid"


class EvalSetInvalidError(InvalidInputError):
    """A line of an evaluation set is not a question this base can score (its line named)."""

    code = "eval_set_invalid"


class EmptyFileError(InvalidInputError):
    code = "empty_file"


class UrlTargetRefusedError(InvalidInputError):
    """A URL to import (or a redirect) leads to an address the server must not reach."""

    code = "url_target_refused"


class UrlFetchError(InvalidInputError):
    """The URL could not be fetched: connection refused, an HTTP error, too many redirects."""

    code = "url_fetch_failed"


class UrlFetchTimeoutError(UrlFetchError):
    """The fetch, redirects included, did not end within its total deadline."""

    code = "url_fetch_timeout"


class UrlEncodingRefusedError(UrlFetchError):
    """The site sent its body under more than one content coding, or one that cannot be undone
    within the size cap."""

    code = "url_encoding_refused"


class FileTooLargeError(GraphragError):
    code = "file_too_large"
    http_status = 413


class UnsupportedMediaError(GraphragError):
    code = "unsupported_media_type"
    http_status = 415


class UnauthorizedError(GraphragError):
    code = "unauthorized"
    http_status = 401


class ForbiddenError(GraphragError):
    code = "forbidden"
    http_status = 403


class RateLimitedError(GraphragError):
    """The API key sent more requests than its window allows; `retry_after_s` says when the
    window ends."""

    code = "rate_limited"
    http_status = 429

    def __init__(self, message: str, retry_after_s: int, **details: Any) -> None:
        super().__init__(message, retry_after_s=retry_after_s, **details)
        self.retry_after_s = retry_after_s


class UrlImportBusyError(RateLimitedError):
    """As many URL imports as allowed (for the key, or for the server) are already running;
    `retry_after_s` says when the first of them will have ended at the latest."""

    code = "url_import_busy"


class ChatBusyError(RateLimitedError):
    """The API key already has as many chat-like requests (knowledge or agent chat, `/v1` chat
    completions, the MCP `ask`) running in this API process as allowed: refused at once, before
    any work; `retry_after_s` is a hint (a turn's length is not known in advance)."""

    code = "chat_busy"


class OwnerForbiddenError(ForbiddenError):
    """A key without `admin` asked to act for a memory owner other than its own."""

    code = "owner_forbidden"


class GraphDisabledError(GraphragError):
    """The knowledge graph is switched off on this server (`NEO4J_ENABLE` is not `true`)."""

    code = "graph_disabled"
    http_status = 503


class GraphNotEnabledForKbError(GraphDisabledError):
    """The graph is on globally, but this knowledge base's own switch is off."""

    code = "kb_graph_disabled"


class ArchivalMemoryDisabledError(GraphDisabledError):
    """Archival facts live in Neo4j, which is off; core and recall memory still work."""

    code = "archival_memory_disabled"


class ServiceUnavailableError(GraphragError):
    code = "service_unavailable"
    http_status = 503


class BrokerUnavailableError(ServiceUnavailableError):
    """The task broker refused or could not take a message; outbox rows wait for the next pass."""

    code = "broker_unavailable"


class EmbeddingError(GraphragError):
    """Texts could not be embedded: the model is missing or mismatched, or its server failed."""

    code = "embedding_failed"
    http_status = 502


class LlmRequestError(GraphragError):
    """The LLM server refused the request itself (a 4xx, e.g. a prompt over the context):
    sending it again cannot succeed."""

    code = "llm_request_rejected"
    http_status = 502


class GraphDataError(GraphragError):
    """Neo4j refused what was written (a client error, text it cannot encode): a retry of the
    same data fails the same way."""

    code = "graph_data_rejected"
    http_status = 500


class PromptError(GraphragError):
    """A prompt template is broken or was rendered with the wrong values: a bug, not user input."""

    code = "prompt_error"
    http_status = 500


class PromptTemplateError(PromptError):
    """A template file is missing, unreadable, or its placeholders disagree with its `inputs`."""

    code = "prompt_template_invalid"


class PromptRenderError(PromptError):
    """A template was rendered with missing or unexpected values."""

    code = "prompt_render_failed"


class GraphStoreError(ServiceUnavailableError):
    code = "graph_store_error"


class GraphSearchTimeoutError(GraphStoreError):
    """A graph search's scan of the base's entity names ran past its time budget
    (`graph_search.match_timeout_s`); Neo4j stopped it. A longer or rarer substring, or a
    `knowledge_ids` filter, scans less."""

    code = "graph_search_timeout"


class LlmUnavailableError(ServiceUnavailableError):
    """The LLM server failed (connection, timeout, 5xx, broken body): worth a later retry."""

    code = "llm_unavailable"


class LlmBusyError(LlmUnavailableError):
    """Every LLM slot of its kind stayed taken for the whole wait: try again shortly."""

    code = "llm_busy"

    def __init__(self, message: str, retry_after_s: int = 1, **details: Any) -> None:
        super().__init__(message, **details)
        self.retry_after_s = retry_after_s


class ParseError(GraphragError):
    """A document could not be parsed; the reason is stored on the document."""

    code = "parse_failed"
    http_status = 422


class CorruptFileError(ParseError):
    code = "corrupt_file"


class EncryptedFileError(ParseError):
    code = "encrypted_file"


class DecodeBudgetError(ParseError):
    """Decoding the file would exceed a budget (size, ratio, pixels, pages, frames)."""

    code = "decode_budget_exceeded"
