"""Every text field of every route refuses NUL, lone surrogates and over-long text with a 4xx,
never a 5xx.

Property-based over the app's own OpenAPI schema: each string field of each JSON body (nested
objects and list items too), each string query and path parameter, is given text holding a NUL,
a lone high or low surrogate, a reversed pair, or half a pair, sent as JSON escapes (as browsers
do) or, for bodies, as raw CESU-8 bytes. The rest of the body is a minimal valid one built from
the schema. Body fields must answer 422 naming the field (400 in OpenAI's shape under `/v1`);
parameters, which arrive percent-encoded and are decoded leniently by the server, must answer a
4xx or a success, never a server error.

Length: each field is given text one character (or a few more) past the shorter of its own
declared `maxLength` and the server's `api.max_text_field_chars`, on a second API whose cap is
small, so that the bodies stay small and the run quick; the same answers are required.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.app import create_app
from graphrag.settings import Settings
from tests.support.http_server import ThreadedServer

pytestmark = pytest.mark.integration

SCHEMA: dict[str, Any] = create_app(Settings()).openapi()
EXAMPLES_PER_FIELD = 4
BAD_CORES = ["\x00", "\ud800", "\udfff", "\udc00\ud800", "\ud83d", "\ude00", "a\x00\ud800"]
SAFE = st.text(alphabet="abcXYZ 09-_", max_size=4)
BAD_TEXT = st.builds(lambda a, bad, b: a + bad + b, SAFE, st.sampled_from(BAD_CORES), SAFE)
TEXT_CAP = 100  # the second API's `api.max_text_field_chars`: above every sample value's length
LENGTH_EXAMPLES_PER_FIELD = 2
# Characters of one, two, three and four UTF-8 bytes: the cap counts characters, not bytes.
LONG_CHARS = st.sampled_from(["a", "é", "語", "😀"])
URL_HEAD = "https://example.org/"


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = SCHEMA["components"]["schemas"][name]
    return schema


def _branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    schema = _resolve(schema)
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return [_resolve(option) for option in options if option.get("type") != "null"]
    return [schema]


def _sample(schema: dict[str, Any]) -> Any:
    """A small valid value for `schema` (required fields only)."""
    schema = _branches(schema)[0]
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        required = schema.get("required", [])
        props = schema.get("properties", {})
        return {name: _sample(props[name]) for name in required}
    if kind == "array":
        return [_sample(schema.get("items", {}))] * max(1, schema.get("minItems", 1))
    if kind == "integer":
        return max(1, schema.get("minimum", 1))
    if kind == "number":
        return schema.get("minimum", 0.5)
    if kind == "boolean":
        return False
    if schema.get("format") == "uuid":
        return str(uuid.uuid4())
    if schema.get("format") == "uri":
        return "https://example.org/a"
    return "x" * max(1, schema.get("minLength", 1))


def _string_paths(schema: dict[str, Any], path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths (keys and list indexes) to every plain string field reachable in `schema`."""
    found: list[tuple[Any, ...]] = []
    for branch in _branches(schema):
        kind = branch.get("type")
        if kind == "string" and "enum" not in branch and branch.get("format") != "uuid":
            found.append(path)
        elif kind == "object":
            for name, prop in branch.get("properties", {}).items():
                found.extend(_string_paths(prop, (*path, name)))
        elif kind == "array" and len(path) < 6:
            found.extend(_string_paths(branch.get("items", {}), (*path, 0)))
    return list(dict.fromkeys(found))


def _with(body: Any, path: tuple[Any, ...], schema: dict[str, Any], value: str) -> Any:
    """`body` with the field at `path` set to `value`, building missing parents from `schema`."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        items = _branches(schema)
        item_schema = next(b for b in items if b.get("type") == "array")["items"]
        items_now = body if isinstance(body, list) and body else [_sample(item_schema)]
        return [_with(items_now[0], rest, item_schema, value), *items_now[1:]]
    obj_schema = next(b for b in _branches(schema) if b.get("type") == "object")
    prop = obj_schema["properties"][head]
    current = dict(body) if isinstance(body, dict) else _sample(obj_schema)
    start = current.get(head)
    if start is None or (rest and isinstance(rest[0], str) and not isinstance(start, dict)):
        start = _sample(prop) if rest else None
    current[head] = _with(start, rest, prop, value)
    return current


def _leaf(schema: dict[str, Any], path: tuple[Any, ...]) -> dict[str, Any]:
    """The string schema of the field at `path` in `schema`."""
    for head in path:
        kind, key = ("array", "items") if isinstance(head, int) else ("object", "properties")
        branch = next(b for b in _branches(schema) if b.get("type") == kind)
        schema = branch[key] if kind == "array" else branch[key][head]
    return next(b for b in _branches(schema) if b.get("type") == "string")


def _operations() -> list[tuple[str, str, str, tuple[Any, ...]]]:
    """(method, path, where, field path) for every string field of every operation."""
    cases: list[tuple[str, str, str, tuple[Any, ...]]] = []
    for route, methods in SCHEMA["paths"].items():
        for method, op in methods.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None:
                for field_path in _string_paths(body["schema"]):
                    cases.append((method.upper(), route, "body", field_path))
            for param in op.get("parameters", []):
                if param["in"] in ("query", "path") and any(
                    b.get("type") == "string" and b.get("format") != "uuid"
                    for b in _branches(param["schema"])
                ):
                    cases.append((method.upper(), route, param["in"], (param["name"],)))
    return cases


CASES = _operations()
# The property tests below run once for every string field of every operation.
over_every_field = pytest.mark.parametrize(
    ("method", "route", "where", "field_path"),
    CASES,
    ids=[f"{m} {r} {w}:{'.'.join(map(str, f))}" for m, r, w, f in CASES],
)


def _examples(count: int) -> settings:
    """`count` reproducible examples per field, without a deadline or an example database."""
    return settings(
        max_examples=count,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


def _url(route: str, op: dict[str, Any], where: str, name: str, value: str) -> str:
    """The route with its path parameters filled (the bad one percent-encoded as CESU-8)."""
    encoded = quote(value.encode("utf-8", "surrogatepass"), safe="")
    for param in op.get("parameters", []):
        if param["in"] == "path":
            filled = encoded if (where, name) == ("path", param["name"]) else "x"
            if any(b.get("format") == "uuid" for b in _branches(param["schema"])):
                filled = str(uuid.uuid4())
            route = route.replace("{" + param["name"] + "}", filled)
    return route + (f"?{name}={encoded}" if where == "query" else "")


def _named(errors: list[dict[str, Any]], field_path: tuple[Any, ...]) -> bool:
    """Whether an error names the field, or an object holding it (a model-level check)."""
    wanted = ["body", *field_path]
    return any(
        len(error["loc"]) > 1
        and (error["loc"][: len(wanted)] == wanted or wanted[: len(error["loc"])] == error["loc"])
        for error in errors
    )


def _body_schema(op: dict[str, Any]) -> dict[str, Any] | None:
    body = op.get("requestBody", {}).get("content", {}).get("application/json")
    return None if body is None else dict(body["schema"])


def _send(client: httpx.Client, method: str, url: str, content: bytes | None) -> httpx.Response:
    """The request, with `content` as its JSON body if there is one."""
    headers = {"content-type": "application/json"} if content is not None else {}
    return client.request(method, url, content=content, headers=headers)


def _check_answer(response: httpx.Response, route: str, where: str, path: tuple[Any, ...]) -> None:
    """Never a server error; a body field is refused naming the field (OpenAI's 400 on /v1)."""
    assert response.status_code < 500, response.text
    if where != "body":
        return
    assert response.status_code == (400 if route.startswith("/v1/") else 422), response.text
    error = response.json()["error"]
    if not route.startswith("/v1/"):
        assert _named(error["details"]["errors"], path), error


def test_every_string_field_is_covered() -> None:
    fields = {(method, route, path) for method, route, _, path in CASES}
    for must in [
        ("POST", "/api/v1/knowledge-bases/{kb_id}/graph-search", ("relation_types", 0)),
        ("POST", "/api/v1/knowledge-chat/{session_id}", ("query",)),
        ("POST", "/api/v1/knowledge-bases/{kb_id}/knowledge/text", ("content",)),
        ("POST", "/v1/chat/completions", ("messages", 0, "content")),
        ("POST", "/api/v1/knowledge-bases", ("extract_config", "nodes", 0, "name")),
    ]:
        assert must in fields, must


@over_every_field
@_examples(EXAMPLES_PER_FIELD)
@given(bad=BAD_TEXT, raw_bytes=st.booleans())
def test_bad_text_in_any_field_is_a_client_error(
    http_module: httpx.Client,
    method: str,
    route: str,
    where: str,
    field_path: tuple[Any, ...],
    bad: str,
    raw_bytes: bool,
) -> None:
    op = SCHEMA["paths"][route][method.lower()]
    url = _url(route, op, where, str(field_path[0]), bad)
    content: bytes | None = None
    if (schema := _body_schema(op)) is not None:
        body = _sample(schema)
        if where == "body":
            body = _with(body, field_path, schema, bad)
        # JSON escapes (ASCII) by default; raw bytes carry surrogates CESU-8 encoded.
        text = json.dumps(body, ensure_ascii=not raw_bytes)
        content = text.encode("utf-8", "surrogatepass")
    _check_answer(_send(http_module, method, url, content), route, where, field_path)


@pytest.fixture(scope="module")
def small_cap_client(settings: Settings, auth_headers: dict[str, str]) -> Iterator[httpx.Client]:
    """A client of a second API (same services) whose text fields hold `TEXT_CAP` characters."""
    api = settings.api.model_copy(update={"max_text_field_chars": TEXT_CAP})
    with (
        ThreadedServer(create_app(settings.model_copy(update={"api": api}))) as url,
        httpx.Client(base_url=url, timeout=30.0, headers=auth_headers) as client,
    ):
        yield client


def _over_long(leaf: dict[str, Any], extra: int, char: str) -> str:
    """Text past the shorter of the field's own maximum and the server's cap."""
    size = min(int(leaf.get("maxLength", TEXT_CAP)), TEXT_CAP) + 1 + extra
    if leaf.get("format") == "uri":
        return URL_HEAD + char * (size - len(URL_HEAD))
    return char * size


@over_every_field
@_examples(LENGTH_EXAMPLES_PER_FIELD)
@given(extra=st.integers(min_value=0, max_value=TEXT_CAP), char=LONG_CHARS)
def test_over_long_text_in_any_field_is_a_client_error(
    small_cap_client: httpx.Client,
    method: str,
    route: str,
    where: str,
    field_path: tuple[Any, ...],
    extra: int,
    char: str,
) -> None:
    op = SCHEMA["paths"][route][method.lower()]
    schema = _body_schema(op)
    body = None if schema is None else _sample(schema)
    if where == "body":
        assert schema is not None
        value = _over_long(_leaf(schema, field_path), extra, char)
        body = _with(body, field_path, schema, value)
    else:
        param = next(p for p in op["parameters"] if p["name"] == field_path[0])
        value = _over_long(_leaf(param["schema"], ()), extra, char)
    url = _url(route, op, where, str(field_path[0]), value)
    content = None if schema is None else json.dumps(body).encode()
    _check_answer(_send(small_cap_client, method, url, content), route, where, field_path)
