"""The validated text types of request fields: no NUL, no lone surrogate, bounded length.

PostgreSQL text cannot hold NUL, and a lone surrogate (`"\\ud800"`, a reversed or half pair sent
as JSON escapes) cannot be encoded as UTF-8 at all: both used to fail deep inside a request (a
500, or a stream cut short). `InputText` refuses them at validation, so they are a 422 with the
field named. The length cap is the server's `api.max_text_field_chars`, set for the duration of
each request by the API (`text_field_limit`); outside a request only the characters are checked.
`InputUrl` is a URL field held to the same checks before it is parsed.

`Bounded` caps a field (items of a list, characters of a text) at a setting of the request's
settings, set by the API for each request with `request_limits`. It is checked before the
items are validated: a list far too long is one error, never one per item (a 1 MB list of bad
items once made half a million errors and a 53 MB reply). Outside a request nothing is capped.
`RequestModel` refuses unknown fields the same way: one error, whatever their number.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    AnyHttpUrl,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    GetCoreSchemaHandler,
    model_validator,
)
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

__all__ = [
    "Bounded",
    "InputText",
    "InputUrl",
    "RequestModel",
    "check_text",
    "encodable",
    "read_stored",
    "request_limits",
    "setting_value",
    "text_field_limit",
]

_NUL = "\x00"
_limit: ContextVar[int | None] = ContextVar("text_field_limit", default=None)
# The request's settings (a `graphrag.settings.Settings`, typed loosely: this module sits on the
# settings' own layer); None outside a request.
_settings: ContextVar[object | None] = ContextVar("request_settings", default=None)
_SIZED = (str, list, tuple, set, frozenset, dict)
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


@contextmanager
def request_limits(settings: Any) -> Iterator[None]:
    """Within this block, request input is held to the caps of `settings` (a `Settings`): every
    `InputText` to `api.max_text_field_chars`, every `Bounded` field to its setting. None: no
    caps."""
    token = _settings.set(settings)
    try:
        with text_field_limit(None if settings is None else settings.api.max_text_field_chars):
            yield
    finally:
        _settings.reset(token)


def read_stored(model: type[_M], stored: object) -> _M:
    """A stored value read as `model`, its text and lists not held to the request's caps: it
    was checked when it came in, and a cap lowered since must not make stored data unreadable."""
    with request_limits(None):
        return model.model_validate(stored)


def setting_value(settings: object, path: str) -> object:
    """The value at the dotted `path` of `settings` (e.g. `chat.max_kbs`)."""
    value = settings
    for part in path.split("."):
        value = getattr(value, part)
    return value


@dataclass(frozen=True)
class Bounded:
    """Annotation: at most the setting `setting` (a dotted path, e.g.
    `"graph_search.max_relation_types"`) items of a list (set, dict) or characters of a text,
    checked before the items are, within `request_limits`."""

    setting: str

    def limit(self) -> int | None:
        """The cap in force: the request's setting, or None outside a request."""
        settings = _settings.get()
        if settings is None:
            return None
        value = setting_value(settings, self.setting)
        assert isinstance(value, int), f"{self.setting} is not a whole number"
        return value

    def _check(self, value: object) -> object:
        limit = self.limit()
        if limit is not None and isinstance(value, _SIZED) and len(value) > limit:
            raise PydanticCustomError(
                "too_long",
                "at most {limit} items or characters ({setting}), not {length}",
                {"limit": limit, "setting": self.setting, "length": len(value)},
            )
        return value

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.no_info_before_validator_function(self._check, handler(source))


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


class RequestModel(BaseModel):
    """A model of request input that refuses unknown fields as one error, before any field is
    validated (`extra="forbid"` alone reports each unknown key: 100,000 of them took a second)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        fields = cls.model_fields
        known = fields.keys() | {f.alias for f in fields.values() if f.alias is not None}
        unknown = [key for key in data if key not in known]
        if unknown:
            # The count first and one name: the API cuts a message at `api.max_error_chars`.
            raise PydanticCustomError(
                "extra_forbidden",
                "{count} unknown fields, the first: {name}",
                {"name": repr(unknown[0]), "count": len(unknown)},
            )
        return data
