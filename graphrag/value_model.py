"""The base of immutable value models: results, records and events passed between layers."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["ValueModel"]


class ValueModel(BaseModel):
    """A pydantic model whose instances never change once built (hashable when its fields are)."""

    model_config = ConfigDict(frozen=True)
