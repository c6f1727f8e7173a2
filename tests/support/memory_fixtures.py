"""pytest fixtures of the agent-memory tests: a fresh owner (cleaned up after) and a test clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from graphrag.memory.records import MemoryOwner
from graphrag.settings import Settings
from tests.support.memory_helpers import ManualClock, owned_memory

__all__ = ["clock", "owner"]


@pytest.fixture
def owner(
    settings: Settings, session_factory: sessionmaker[Session], neo4j_driver: Driver
) -> Iterator[MemoryOwner]:
    """A memory owner of its own, whose memory is deleted after the test."""
    with owned_memory(settings, session_factory, neo4j_driver) as who:
        yield who


@pytest.fixture
def clock() -> ManualClock:
    """A clock the test moves by hand (days of recency decay in no time)."""
    return ManualClock()
