"""The validated text types of request fields: no NUL, no lone surrogate, bounded length.

PostgreSQL text cannot hold NUL, and a lone surrogate (`"\\ud800"`, a reversed or half pair sent
as JSON escapes) cannot be encoded as UTF-8 at all: both used to fail deep inside a request (a
500, or a stream cut short). `InputText` refuses them at validation, so they are a 422 with the
field named. The length cap is the server's `api.max_text_field_chars`, set for the duration of
each request by the API (`text_field_limit`); outside a request only the characters are checked.
`InputUrl` is a URL field held to the same checks before it is parsed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, TypeVar

from pydantic import AfterValidator, AnyHttpUrl, BaseModel, BeforeValidator

__all__ = ["InputText", "InputUrl", "check_text", "encodable", "read_stored", "text_field_limit"]

_NUL = "\x00"
_limit: ContextVar[int | None] = ContextVar("text_field_limit", default=None)
_M = TypeVar("_M", bound=BaseModel)


@contextmanager
def text_field_limit(max_chars: int | None) -> Iterator[None]:
    """Within this block, `InputText` values longer than `max_chars` are refused (None: any
    length)."""
    token = _limit.set(max_chars)
    try:
        yield
    finally:
        _limit.reset(token)


def read_stored(model: type[_M], stored: object) -> _M:
    """A stored value read as `model`, its text not held to the request's length limit: it was
    checked when it came in, and a limit lowered since must not make stored data unreadable."""
    with text_field_limit(None):
        return model.model_validate(stored)


def encodable(text: str) -> bool:
    """Whether `text` can be written as UTF-8 (it holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(value: str) -> str:
    """`value` unchanged if it is storable text within the limit in force; else ValueError."""
    limit = _limit.get()
    if limit is not None and len(value) > limit:
        raise ValueError(f"the text has {len(value)} characters; the limit is {limit}")
    if _NUL in value:
        raise ValueError("the text holds a NUL character")
    if not value.isascii() and not encodable(value):
        raise ValueError("the text holds a lone surrogate (not valid Unicode)")
    return value


InputText = Annotated[str, AfterValidator(check_text)]


def _check_raw_text(value: object) -> object:
    # Before parsing: a string is checked as text; anything else is left to the type to refuse.
    return check_text(value) if isinstance(value, str) else value


# An http(s) URL, which pydantic would otherwise take at any length.
InputUrl = Annotated[AnyHttpUrl, BeforeValidator(_check_raw_text)]
