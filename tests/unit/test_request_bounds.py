"""Every request input is bounded: a walk over each route's body models (and the MCP tools'
arguments), recursively, fails on a list, set, dict or text without a cap; the caps named by
`Bounded` are real settings; a list far too long, or a body of many unknown fields, is refused
with one error, not one per item.
"""

from __future__ import annotations

import datetime
import enum
import types
import uuid
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pytest
from fastapi import UploadFile
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic import AfterValidator, AnyUrl, BaseModel, BeforeValidator, ValidationError

from api.app import create_app
from api.mcp_server import build_mcp_server
from graphrag.graph.search_models import GraphSearchRequest
from graphrag.settings import Settings
from graphrag.text_input import (
    Bounded,
    RequestModel,
    check_text,
    request_limits,
    setting_value,
)

pytestmark = pytest.mark.unit

_ATOMS = (bool, int, float, uuid.UUID, datetime.datetime, type(None))
_SIZED = (list, set, frozenset, tuple, dict)


def _caps(metadata: list[Any]) -> bool:
    """Whether one of the constraints bounds a length."""
    for item in metadata:
        if isinstance(item, Bounded) or getattr(item, "max_length", None) is not None:
            return True
        # `InputText` / `InputUrl`: held to `api.max_text_field_chars` by `check_text`.
        if (
            isinstance(item, AfterValidator | BeforeValidator)
            and getattr(item.func, "__module__", "") == check_text.__module__
        ):
            return True
    return False


def _fixed_size(tp: Any) -> bool:
    """A value of bounded size by its type (an upload's size is the body cap's business)."""
    return tp in _ATOMS or tp is UploadFile or (isinstance(tp, type) and issubclass(tp, enum.Enum))


class _Walk:
    def __init__(self) -> None:
        self.problems: list[str] = []
        self.bounds: list[Bounded] = []
        self.models: set[type[BaseModel]] = set()
        self.body_models: set[type[BaseModel]] = set()  # the REST routes' (not the MCP SDK's)

    def model(self, model: type[BaseModel]) -> None:
        if model in self.models:
            return
        self.models.add(model)
        for name, field in model.model_fields.items():
            self.type(field.annotation, list(field.metadata), f"{model.__name__}.{name}")

    def type(self, tp: Any, metadata: list[Any], where: str) -> None:
        self.bounds += [m for m in metadata if isinstance(m, Bounded)]
        origin = get_origin(tp)
        if origin is Annotated:
            base, *extra = get_args(tp)
            self.type(base, metadata + list(extra), where)
        elif origin in (Union, types.UnionType):
            for arm in get_args(tp):
                self.type(arm, metadata, where)
        elif origin is Literal or _fixed_size(tp):
            return
        elif tp is str or (isinstance(tp, type) and issubclass(tp, AnyUrl)):
            self._bounded(metadata, f"{where}: text")
        elif origin in _SIZED:
            self._bounded(metadata, f"{where}: {origin.__name__}")
            for arg in get_args(tp):
                if arg is not Ellipsis:
                    self.type(arg, [], f"{where}[]")
        elif isinstance(tp, type) and issubclass(tp, BaseModel):
            self.model(tp)
        else:
            self.problems.append(f"{where}: {tp!r} is a type this walk does not know")

    def _bounded(self, metadata: list[Any], what: str) -> None:
        if not _caps(metadata):
            self.problems.append(f"{what} has no cap")


@pytest.fixture(scope="module")
def walk() -> _Walk:
    settings = Settings()
    found = _Walk()
    bodies = 0
    for context in iter_route_contexts(create_app(settings).routes):
        if isinstance(context.original_route, APIRoute):
            for param in context.dependant.body_params:
                bodies += 1
                where = f"{sorted(context.methods or ())} {context.path} {param.name}"
                found.type(param.field_info.annotation, list(param.field_info.metadata), where)
    found.body_models = set(found.models)
    server = build_mcp_server(settings, lambda _ctx: None, lambda _ctx: None)  # type: ignore[arg-type,return-value]
    tools = server._tool_manager.list_tools()  # the SDK's argument models are not public
    for tool in tools:
        found.model(tool.fn_metadata.arg_model)
    assert bodies >= 15 and len(tools) == 8  # the walk saw the routes and tools it should
    return found


def test_every_request_list_and_text_is_bounded(walk: _Walk) -> None:
    assert walk.problems == []


def test_unknown_fields_are_refused_at_once_or_ignored(walk: _Walk) -> None:
    # Refused by `RequestModel` as one error; only OpenAI's lenient shapes ignore them.
    lenient = {m for m in walk.body_models if not issubclass(m, RequestModel)}
    assert {m.__name__ for m in lenient} == {
        "CompletionRequest",
        "MessageIn",
        "ContentPart",
        "StreamOptions",
    }
    assert all(m.model_config.get("extra") == "ignore" for m in lenient)


def test_many_unknown_fields_are_one_error() -> None:
    body: dict[str, object] = {"entity": "Ada", **{f"k{i}": 0 for i in range(100_000)}}
    with pytest.raises(ValidationError) as refused:
        GraphSearchRequest.model_validate(body)
    assert refused.value.error_count() == 1
    error = refused.value.errors()[0]
    assert error["type"] == "extra_forbidden" and error["msg"].startswith("100000 unknown fields")


def test_every_bound_names_a_whole_number_setting(walk: _Walk) -> None:
    settings = Settings()
    assert walk.bounds
    for bound in walk.bounds:
        value = setting_value(settings, bound.setting)
        assert isinstance(value, int) and value > 0, bound.setting


def test_a_list_far_too_long_is_one_error_within_a_request() -> None:
    settings = Settings()
    body = {"entity": "Ada", "relation_types": [1] * 100_000}
    with request_limits(settings), pytest.raises(ValidationError) as refused:
        GraphSearchRequest.model_validate(body)
    assert refused.value.error_count() == 1
    error = refused.value.errors()[0]
    assert error["loc"] == ("relation_types",) and error["type"] == "too_long"
    assert str(settings.graph_search.max_relation_types) in error["msg"]
    # Outside a request nothing is capped: each bad item is its own error.
    with pytest.raises(ValidationError) as unbounded:
        GraphSearchRequest.model_validate({"entity": "Ada", "relation_types": [1] * 3})
    assert unbounded.value.error_count() == 3


def test_a_list_at_its_cap_is_read() -> None:
    settings = Settings()
    cap = settings.graph_search.max_relation_types
    with request_limits(settings):
        read = GraphSearchRequest.model_validate({"entity": "Ada", "relation_types": ["r"] * cap})
    assert read.relation_types == ["r"] * cap
