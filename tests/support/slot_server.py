"""A scripted LLM server with a few slots that holds each request a while: the graph workers'
in-flight calls are measured on it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.scripted_llm import ScriptedLlmServer

__all__ = ["HOLD_S", "SLOTS", "slot_server"]

SLOTS = 4
HOLD_S = 0.5
REPLY = {"nodes": [{"name": "Slot Test Entity", "attributes": []}], "relations": []}


@pytest.fixture()
def slot_server() -> Iterator[ScriptedLlmServer]:
    with ScriptedLlmServer() as server:
        server.set_script(
            {
                "slots": SLOTS,
                "latency_s": HOLD_S,
                "models": ["scripted"],
                "default": {"content": REPLY},
            }
        )
        yield server
