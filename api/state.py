"""What the lifespan opens once per API process and the dependencies hand to routes."""

from __future__ import annotations

from dataclasses import dataclass

import redis
from neo4j import Driver
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from graphrag.settings import Settings

__all__ = ["AppState"]


@dataclass
class AppState:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    redis: redis.Redis[bytes]
    neo4j: Driver | None
