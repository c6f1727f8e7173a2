"""How `graphrag serve` runs the app under uvicorn: the options it takes from the settings."""

from __future__ import annotations

from typing import Any

from graphrag.settings import Settings

__all__ = ["server_options"]


def server_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's options for the forwarded headers: believe `X-Forwarded-For` and
    `X-Forwarded-Proto` only from the proxies of `api.forwarded_allow_ips` (none when it is
    empty). Behind a proxy that is not listed, every client has the proxy's address: one
    address that sends bad keys then locks everyone out (see `graphrag.auth.rate_limit`)."""
    proxies = list(settings.api.forwarded_allow_ips)
    if not proxies:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": proxies}
