"""The web console: static files served by the API itself (no separate server, no CDN)."""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.staticfiles import PathLike
from starlette.types import Scope

from api.auth import PUBLIC

__all__ = ["CONSOLE_DIR", "mount_console"]

CONSOLE_DIR = Path(__file__).parent / "console"
CONSOLE_PREFIX = "/console"

# The page may load and call only its own origin: no CDN, no inline script, no framing.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)

_router = APIRouter(include_in_schema=False)


class _ConsoleFiles(StaticFiles):
    """The console's files, each with the page's policy: `/console/index.html` is the same page
    as `/` and must not be served without it."""

    def file_response(
        self,
        full_path: PathLike,
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        return response


@_router.get("/", dependencies=[PUBLIC])
def console_page() -> FileResponse:
    """The console's single page; it signs in with an API key kept in the browser session."""
    return FileResponse(
        CONSOLE_DIR / "index.html",
        media_type="text/html",
        headers={"Content-Security-Policy": CONTENT_SECURITY_POLICY},
    )


def mount_console(app: FastAPI) -> None:
    """Serve the page at `/` and its scripts and styles under `/console/`; other paths keep
    their JSON 404 and 405 answers."""
    app.include_router(_router)
    app.mount(CONSOLE_PREFIX, _ConsoleFiles(directory=CONSOLE_DIR), name="console")
