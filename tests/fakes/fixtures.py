"""pytest fixtures around the scripted LLM server.

`scripted_llm` is one server for the whole session; `fresh_scripted_llm` hands the same server
to a test after resetting its script and request log, so tests never see each other's rules.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.scripted_llm import ScriptedLlmServer

__all__ = ["fresh_scripted_llm", "scripted_llm"]


@pytest.fixture(scope="session")
def scripted_llm() -> Iterator[ScriptedLlmServer]:
    """The scripted OpenAI-compatible server, started once per session."""
    with ScriptedLlmServer() as server:
        yield server


@pytest.fixture
def fresh_scripted_llm(scripted_llm: ScriptedLlmServer) -> ScriptedLlmServer:
    """The session server with the default script and an empty request log."""
    scripted_llm.reset()
    return scripted_llm
