"""A model's JSON reply read as JSON, or repaired when it is cut short or fenced."""

from __future__ import annotations

import json
from typing import Any

import json_repair

__all__ = ["load_json_reply"]


def load_json_reply(fragment: str) -> Any:
    """The value of `fragment`: strict JSON first, `json_repair` when that fails."""
    try:
        return json.loads(fragment)
    except json.JSONDecodeError:
        return json_repair.loads(fragment)
