"""Chat turns as the benchmark runs them: the real stages, a scripted entity-extraction reply.

A turn is `start_turn` (session and scope checks) then `prepare_turn` (every stage up to the
prompt), exactly as `run_chat` does before it streams the answer; the answer itself is not
generated. The only stand-in is the LLM call of `understand_query`: `FakeEntityLlm` answers at
once with the question's entity names, so what is timed is our code and the stores.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import Any

from bench.chat_corpus import Question
from graphrag.auth.models import Capability, Principal
from graphrag.chat.pipeline import prepare_turn
from graphrag.chat.schemas import ChatRequest
from graphrag.chat.service import start_turn
from graphrag.chat.sessions import SessionAccess
from graphrag.chat.turn import ChatServices
from graphrag.llm.client import LlmClient, LlmReply
from graphrag.llm.messages import ChatMessage
from graphrag.search.embeddings import Embedder
from graphrag.search.models import MatchType
from graphrag.settings import LlmSettings

__all__ = ["EMBED_QUERY", "START_TURN", "FakeEntityLlm", "TimedEmbedder", "TurnSample", "run_turn"]

_MS_PER_S = 1000.0
START_TURN = "start_turn"
EMBED_QUERY = "embed_query"  # inside chunk_search
_STOP = "stop"


class FakeEntityLlm(LlmClient):
    """Answers every completion with `names` as a JSON list; never opens a connection."""

    def __init__(self, settings: LlmSettings) -> None:
        super().__init__(settings)
        self.names: list[str] = []

    def complete(
        self,
        messages: list[ChatMessage],
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> LlmReply:
        return LlmReply(json.dumps(self.names), _STOP)


class TimedEmbedder:
    """The real embedder, adding the milliseconds spent embedding to `spent_ms`."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.spent_ms = 0.0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        start = perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.spent_ms += (perf_counter() - start) * _MS_PER_S

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def close(self) -> None:
        """Nothing to release."""


@dataclass(frozen=True)
class TurnSample:
    """One turn's wall time, its stages' times and what each method brought."""

    total_ms: float
    stages_ms: dict[str, float]
    entities: int
    graph_added: int
    keyword_hits: int
    hits: int


def run_turn(
    services: ChatServices,
    tenant_id: uuid.UUID,
    session_id: uuid.UUID,
    question: Question,
    use_graph: bool,
) -> TurnSample:
    """One question through `start_turn` + `prepare_turn`, timed."""
    llm, embedder = services.llm, services.embedder
    if not (isinstance(llm, FakeEntityLlm) and isinstance(embedder, TimedEmbedder)):
        raise TypeError("the benchmark's services need FakeEntityLlm and TimedEmbedder")
    llm.names = question.entities
    embedder.spent_ms = 0.0
    request = ChatRequest(query=question.text, use_graph=use_graph)
    start = perf_counter()
    # The caller of a base without authentication: every capability, any owner's session.
    caller = Principal(tenant_id=tenant_id, capabilities=frozenset(Capability))
    access = SessionAccess(tenant_id, caller, services.settings.memory.default_owner)
    turn = start_turn(services, access, session_id, request)
    scoped = perf_counter()
    prepare_turn(services, turn)
    end = perf_counter()
    stages = {
        START_TURN: (scoped - start) * _MS_PER_S,
        **turn.timings_ms,
        EMBED_QUERY: embedder.spent_ms,
    }
    keyword = (MatchType.KEYWORD, MatchType.HYBRID)
    return TurnSample(
        total_ms=(end - start) * _MS_PER_S,
        stages_ms=stages,
        entities=len(turn.entities),
        graph_added=sum(1 for h in turn.hits if h.match_type is MatchType.GRAPH),
        keyword_hits=sum(1 for h in turn.chunk_hits if h.match_type in keyword),
        hits=len(turn.hits),
    )
