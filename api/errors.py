"""One JSON error envelope for every failure: {"error": {"code", "message", "details"}}.

Under the OpenAI-compatible prefix `/v1` the same errors take OpenAI's shape instead,
`{"error": {"message", "type", "param", "code"}}`, so that OpenAI clients can read them.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError
from starlette.exceptions import HTTPException as StarletteHTTPException

from graphrag.errors import GraphragError, UnauthorizedError
from graphrag.faces.openai_schemas import openai_error
from graphrag.settings import ApiSettings

__all__ = [
    "OPENAI_PREFIX",
    "error_for_path",
    "error_response",
    "graphrag_error_for_path",
    "graphrag_error_response",
    "install_error_handlers",
    "openai_error_response",
]

OPENAI_PREFIX = "/v1"

log = logging.getLogger(__name__)

_INVALID_STATUS = 422
_OPENAI_INVALID_STATUS = 400
_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "file_too_large",
    415: "unsupported_media_type",
    422: "invalid_input",
    429: "too_many_requests",
    503: "service_unavailable",
}


def error_response(status: int, code: str, message: str, details: Any = None) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "details": details or {}}}
    return JSONResponse(status_code=status, content=jsonable_encoder(body))


def _openai_param(details: dict[str, Any]) -> str | None:
    """The request field an error is about: named by the error, or the first invalid one."""
    if isinstance(details.get("param"), str):
        return str(details["param"])
    for error in details.get("errors", []):
        fields = [str(part) for part in error.get("loc", []) if part != "body"]
        if fields:
            return fields[0]
    return None


def openai_error_response(
    status: int, code: str, message: str, details: dict[str, Any] | None = None
) -> JSONResponse:
    """The same error in OpenAI's shape; an invalid request is a 400 there, not a 422."""
    status = _OPENAI_INVALID_STATUS if status == _INVALID_STATUS else status
    body = openai_error(status, code, message, _openai_param(details or {}))
    return JSONResponse(status_code=status, content=jsonable_encoder(body))


def _is_openai(path: str) -> bool:
    return path == OPENAI_PREFIX or path.startswith(f"{OPENAI_PREFIX}/")


def error_for_path(
    path: str, status: int, code: str, message: str, details: Any = None
) -> JSONResponse:
    """The error in the shape the route at `path` uses (OpenAI's under `/v1`, else ours)."""
    if _is_openai(path):
        return openai_error_response(status, code, message, details)
    return error_response(status, code, message, details)


def _respond(
    request: Request, status: int, code: str, message: str, details: Any = None
) -> JSONResponse:
    return error_for_path(request.url.path, status, code, message, details)


def graphrag_error_response(exc: GraphragError, openai_shape: bool = False) -> JSONResponse:
    """The envelope of `exc`, with `Retry-After` when the error says when to try again."""
    respond = openai_error_response if openai_shape else error_response
    response = respond(exc.http_status, exc.code, exc.message, exc.details)
    if exc.retry_after_s is not None:
        response.headers["Retry-After"] = str(exc.retry_after_s)
    if isinstance(exc, UnauthorizedError):
        response.headers["WWW-Authenticate"] = "Bearer"  # the scheme a 401 asks for (RFC 9110)
    return response


def graphrag_error_for_path(path: str, exc: GraphragError) -> JSONResponse:
    """The envelope of `exc` in the shape the route at `path` uses (OpenAI's under `/v1`)."""
    if exc.http_status >= 500:
        log.warning("%s: %s", exc.code, exc.message)
    return graphrag_error_response(exc, _is_openai(path))


async def _graphrag_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, GraphragError)
    return graphrag_error_for_path(request.url.path, exc)


def _cut(part: Any, max_chars: int) -> Any:
    # A field name may be the client's own (an unknown key): it is cut like any text.
    return part[:max_chars] if isinstance(part, str) else part


def _listed_errors(exc: RequestValidationError, api: ApiSettings) -> dict[str, Any]:
    """The first `api.max_validation_errors` errors, each part cut at `api.max_error_chars`,
    and how many there were: a reply stays small whatever the request held."""
    found = exc.errors()
    errors = [
        {
            "loc": [_cut(part, api.max_error_chars) for part in e.get("loc", ())],
            "msg": _cut(e.get("msg", ""), api.max_error_chars),
            "type": _cut(e.get("type", ""), api.max_error_chars),
        }
        for e in found[: api.max_validation_errors]
    ]
    return {"errors": errors, "error_count": len(found)}


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = _listed_errors(exc, request.app.state.graphrag.settings.api)
    return _respond(request, _INVALID_STATUS, "invalid_input", "the request is not valid", details)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    return _respond(request, exc.status_code, code, str(exc.detail))


async def _unstorable(request: Request, exc: Exception) -> JSONResponse:
    # PostgreSQL refused a value the input carried (a NUL character, a number out of range):
    # bad input, and nothing was written (the request's transaction is rolled back).
    log.warning("value refused by the database: %s", getattr(exc, "orig", exc))
    message = "the request holds a value that cannot be stored (e.g. a NUL character)"
    return _respond(request, _INVALID_STATUS, "invalid_input", message)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)
    return _respond(request, 500, "internal_error", "an unexpected error occurred")


def install_error_handlers(app: FastAPI) -> None:
    """Map every error to the envelope (OpenAI's under `/v1`); unknown errors become a logged
    500 without internals."""
    app.add_exception_handler(GraphragError, _graphrag_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(DataError, _unstorable)
    app.add_exception_handler(Exception, _unexpected)
