"""The base of every settings section: frozen, and unknown keys are an error."""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["Section"]


class Section(BaseModel):
    model_config = {"extra": "forbid", "frozen": True}
