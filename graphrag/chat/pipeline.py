"""The stages that prepare a chat turn: plain functions called in order, each one timed."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from time import perf_counter
from typing import NamedTuple

from graphrag.chat import stages
from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.timing import elapsed_ms

__all__ = [
    "AGENT_PREPARE_ORDER",
    "PREPARE_ORDER",
    "ChatStage",
    "Stage",
    "StageOrder",
    "prepare_turn",
]


class ChatStage(StrEnum):
    """A stage's name: its key in the turn's `timings_ms`."""

    LOAD_HISTORY = "load_history"
    MEMORY_RECALL = "memory_recall"
    QUERY_UNDERSTAND = "query_understand"
    QUERY_DECOMPOSE = "query_decompose"
    CHUNK_SEARCH = "chunk_search"
    MERGE = "merge"
    PROMPT = "prompt"


class Stage(NamedTuple):
    """One stage: it reads what earlier stages wrote on the turn and writes its own part."""

    name: ChatStage
    run: Callable[[ChatServices, ChatTurn], None]


StageOrder = tuple[Stage, ...]

# Knowledge chat: every stage up to the prompt.
PREPARE_ORDER: StageOrder = (
    Stage(ChatStage.LOAD_HISTORY, stages.load_history),
    Stage(ChatStage.MEMORY_RECALL, stages.recall_memory),
    Stage(ChatStage.QUERY_UNDERSTAND, stages.understand_query),
    Stage(ChatStage.QUERY_DECOMPOSE, stages.decompose_query),
    Stage(ChatStage.CHUNK_SEARCH, stages.chunk_search),
    Stage(ChatStage.MERGE, stages.merge_hits),
    Stage(ChatStage.PROMPT, stages.build_prompt),
)

# The agent searches with its tools: only the conversation and the memory (the first two
# stages) are prepared.
AGENT_PREPARE_ORDER: StageOrder = PREPARE_ORDER[:2]


def prepare_turn(services: ChatServices, turn: ChatTurn, order: StageOrder = PREPARE_ORDER) -> None:
    """Run the stages of `order` one after the other, each one's time in `turn.timings_ms`
    under its name; the answer is produced by the caller."""
    for stage in order:
        start = perf_counter()
        stage.run(services, turn)
        turn.timings_ms[stage.name.value] = round(elapsed_ms(start), 3)
