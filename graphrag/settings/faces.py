"""Settings of the OpenAI-compatible endpoint and the MCP server."""

from __future__ import annotations

from pydantic import Field

from graphrag.settings.base import Section as _Section

__all__ = ["FacesSettings"]


class FacesSettings(_Section):
    """The OpenAI-compatible endpoint (`/v1`) and the MCP server (`/mcp` and stdio)."""

    model_owner: str = Field(min_length=1, description="`owned_by` of the listed models")
    max_conversation_chars: int = Field(gt=0)
    max_system_chars: int = Field(gt=0, description="the caller's system text of a /v1 request")
    chars_per_token: float = Field(gt=0)
    mcp_server_name: str = Field(min_length=1)
    mcp_allowed_hosts: list[str]
    mcp_allowed_origins: list[str]
    mcp_max_body_bytes: int = Field(gt=0)
    max_model_id_chars: int = Field(gt=0, description="a /v1 model id or an MCP `kb` argument")
