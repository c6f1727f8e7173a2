"""The chat's services for a process that opens its own (`graphrag ask`, `graphrag mcp`).

The API does not open them here: it hands the chat what its lifespan already opened
(`api.state.AppState.chat_services`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import redis

from graphrag.chat.turn import ChatServices
from graphrag.db.engine import make_engine, make_session_factory
from graphrag.graph.factory import build_graph_store
from graphrag.llm.client import LlmClient
from graphrag.llm.concurrency import interactive_limiter
from graphrag.search.embeddings import OpenAiCompatibleEmbedder, build_embedder
from graphrag.settings import Settings

__all__ = ["open_chat_services"]


@contextmanager
def open_chat_services(settings: Settings) -> Iterator[ChatServices]:
    """Database sessions, the embedder, the LLM client on the interactive slots and the graph
    store (no agent memory), each closed on exit in the reverse order of opening."""
    with ExitStack() as opened:
        engine = make_engine(settings)
        opened.callback(engine.dispose)
        client = redis.Redis.from_url(settings.redis.url)
        opened.callback(client.close)
        embedder = build_embedder(settings.embedding)
        if isinstance(embedder, OpenAiCompatibleEmbedder):
            opened.callback(embedder.close)
        graph = build_graph_store(settings)
        opened.callback(graph.close)
        yield ChatServices(
            settings=settings,
            sessions=make_session_factory(engine),
            embedder=embedder,
            llm=LlmClient(settings.llm, interactive_limiter(client, settings.llm)),
            graph=graph,
        )
