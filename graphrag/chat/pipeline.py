"""The chat pipeline: plugins bound to events, run in order (stages of one group side by side)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from enum import StrEnum
from time import perf_counter

from graphrag.chat import plugins
from graphrag.chat.turn import ChatServices, ChatTurn

__all__ = [
    "AGENT_PREPARE_ORDER",
    "DEFAULT_PLUGINS",
    "PREPARE_ORDER",
    "ChatStage",
    "Plugin",
    "StageOrder",
    "prepare_turn",
]

Plugin = Callable[[ChatServices, ChatTurn], None]
_MS_PER_S = 1000.0


class ChatStage(StrEnum):
    LOAD_HISTORY = "load_history"
    MEMORY_RECALL = "memory_recall"
    QUERY_UNDERSTAND = "query_understand"
    CHUNK_SEARCH = "chunk_search"
    RERANK = "rerank"
    MERGE = "merge"
    PROMPT = "prompt"


DEFAULT_PLUGINS: Mapping[ChatStage, list[Plugin]] = {
    ChatStage.LOAD_HISTORY: [plugins.load_history],
    ChatStage.MEMORY_RECALL: [plugins.recall_memory],
    ChatStage.QUERY_UNDERSTAND: [plugins.understand_query],
    ChatStage.CHUNK_SEARCH: [plugins.chunk_search],
    ChatStage.RERANK: [],  # a reranker hooks in here; none by default
    ChatStage.MERGE: [plugins.merge_hits],
    ChatStage.PROMPT: [plugins.build_prompt],
}

StageOrder = tuple[tuple[ChatStage, ...], ...]

# Stages in one tuple run at the same time (they write different parts of the turn).
PREPARE_ORDER: StageOrder = (
    (ChatStage.LOAD_HISTORY,),
    (ChatStage.MEMORY_RECALL,),
    (ChatStage.QUERY_UNDERSTAND,),
    (ChatStage.CHUNK_SEARCH,),
    (ChatStage.RERANK,),
    (ChatStage.MERGE,),
    (ChatStage.PROMPT,),
)

# The agent searches with its tools: only the conversation and the memory are prepared.
AGENT_PREPARE_ORDER: StageOrder = (
    (ChatStage.LOAD_HISTORY,),
    (ChatStage.MEMORY_RECALL,),
)


def _run_stage(
    services: ChatServices,
    turn: ChatTurn,
    stage: ChatStage,
    bound: Mapping[ChatStage, list[Plugin]],
) -> None:
    start = perf_counter()
    for plugin in bound.get(stage, []):
        plugin(services, turn)
    turn.timings_ms[stage.value] = round((perf_counter() - start) * _MS_PER_S, 3)


def prepare_turn(
    services: ChatServices,
    turn: ChatTurn,
    bound: Mapping[ChatStage, list[Plugin]] = DEFAULT_PLUGINS,
    order: StageOrder = PREPARE_ORDER,
) -> None:
    """The stages of `order` (by default every one up to the prompt), each running the plugins
    bound to it; the answer is produced by the caller."""
    for group in order:
        if len(group) == 1:
            _run_stage(services, turn, group[0], bound)
            continue
        with ThreadPoolExecutor(max_workers=len(group)) as pool:
            futures = [pool.submit(_run_stage, services, turn, s, bound) for s in group]
            for future in futures:
                future.result()
