"""The web console: static files served by the API itself (no separate server, no CDN)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from api.auth import PUBLIC

__all__ = ["CONSOLE_DIR", "mount_console"]

CONSOLE_DIR = Path(__file__).parent / "console"
CONSOLE_PREFIX = "/console"

_router = APIRouter(include_in_schema=False)


@_router.get("/", dependencies=[PUBLIC])
def console_page() -> FileResponse:
    """The console's single page; it signs in with an API key kept in the browser session."""
    return FileResponse(CONSOLE_DIR / "index.html", media_type="text/html")


def mount_console(app: FastAPI) -> None:
    """Serve the page at `/` and its scripts and styles under `/console/`; other paths keep
    their JSON 404 and 405 answers."""
    app.include_router(_router)
    app.mount(CONSOLE_PREFIX, StaticFiles(directory=CONSOLE_DIR), name="console")
