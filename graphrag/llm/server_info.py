"""What the LLM server says about itself: its model and how many requests it serves at once.

llama.cpp's `llama-server` answers `GET /props` with `total_slots` (its `--parallel`), and
`GET /slots` with one entry per slot; other OpenAI-compatible servers answer neither, and the
configured fallback applies.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx

from graphrag.settings import LlmSettings
from graphrag.value_model import ValueModel

__all__ = ["LlmServerInfo", "read_server_info", "server_root", "slot_limit"]

log = logging.getLogger(__name__)

_API_SUFFIX = "/v1"


class LlmServerInfo(ValueModel):
    """The server as seen at one moment; `total_slots` is None when it does not say."""

    base_url: str
    model: str
    reachable: bool
    total_slots: int | None = None
    detail: str | None = None


def server_root(base_url: str) -> str:
    """The server's root URL: the OpenAI base URL without its `/v1`."""
    root = base_url.rstrip("/")
    return root[: -len(_API_SUFFIX)] if root.endswith(_API_SUFFIX) else root


def _get_json(client: httpx.Client, url: str) -> Any:
    response = client.get(url)
    response.raise_for_status()
    return response.json()


def _slots(client: httpx.Client, root: str) -> int | None:
    props = _get_json(client, f"{root}/props")
    total = props.get("total_slots") if isinstance(props, dict) else None
    if isinstance(total, int) and total > 0:
        return total
    slots = _get_json(client, f"{root}/slots")
    return len(slots) if isinstance(slots, list) and slots else None


def _model(client: httpx.Client, base_url: str, configured: str) -> str:
    listed = _get_json(client, f"{base_url.rstrip('/')}/models")
    data = listed.get("data") if isinstance(listed, dict) else None
    ids = [m.get("id") for m in data or [] if isinstance(m, dict)]
    return configured if configured in ids or not ids else str(ids[0])


def read_server_info(settings: LlmSettings) -> LlmServerInfo:
    """Ask the server for its model and slots; an unreachable server is reported, not raised."""
    root = server_root(settings.base_url)
    headers = {"Authorization": f"Bearer {settings.api_key.get_secret_value()}"}
    with httpx.Client(timeout=settings.props_timeout_s, headers=headers) as client:
        try:
            model = _model(client, settings.base_url, settings.model)
        except (httpx.HTTPError, ValueError) as exc:
            return LlmServerInfo(
                base_url=settings.base_url, model=settings.model, reachable=False, detail=str(exc)
            )
        try:
            slots = _slots(client, root)
        except (httpx.HTTPError, ValueError) as exc:
            log.info("the LLM server does not report its slots (%s)", exc)
            slots = None
    return LlmServerInfo(base_url=settings.base_url, model=model, reachable=True, total_slots=slots)


def slot_limit(settings: LlmSettings, info: LlmServerInfo | None = None) -> int:
    """Background LLM calls allowed at once: the configured number, or with `auto` the server's
    slot count (asked now unless `info` is given), else the configured fallback."""
    if settings.concurrency_limit != "auto":
        return settings.concurrency_limit
    known = info if info is not None else read_server_info(settings)
    if known.total_slots is None:
        log.warning(
            "LLM slots unknown (%s); using concurrency_fallback=%d",
            known.detail or "no /props or /slots",
            settings.concurrency_fallback,
        )
        return settings.concurrency_fallback
    return known.total_slots
