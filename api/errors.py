"""One JSON error envelope for every failure: {"error": {"code", "message", "details"}}."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError
from starlette.exceptions import HTTPException as StarletteHTTPException

from graphrag.errors import GraphragError

__all__ = ["error_response", "install_error_handlers"]

log = logging.getLogger(__name__)

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


async def _graphrag_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, GraphragError)
    if exc.http_status >= 500:
        log.warning("%s: %s", exc.code, exc.message)
    return error_response(exc.http_status, exc.code, exc.message, exc.details)


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [
        {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
        for e in exc.errors()
    ]
    return error_response(422, "invalid_input", "the request is not valid", {"errors": errors})


async def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    return error_response(exc.status_code, code, str(exc.detail))


async def _unstorable(_: Request, exc: Exception) -> JSONResponse:
    # PostgreSQL refused a value the input carried (a NUL character, a number out of range):
    # bad input, and nothing was written (the request's transaction is rolled back).
    log.warning("value refused by the database: %s", getattr(exc, "orig", exc))
    message = "the request holds a value that cannot be stored (e.g. a NUL character)"
    return error_response(422, "invalid_input", message)


async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)
    return error_response(500, "internal_error", "an unexpected error occurred")


def install_error_handlers(app: FastAPI) -> None:
    """Map every error to the envelope; unknown errors become a logged 500 without internals."""
    app.add_exception_handler(GraphragError, _graphrag_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(DataError, _unstorable)
    app.add_exception_handler(Exception, _unexpected)
