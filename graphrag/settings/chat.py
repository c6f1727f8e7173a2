"""Settings of the chat path."""

from __future__ import annotations

from pydantic import Field

from graphrag.settings.base import Section as _Section

__all__ = ["ChatSettings", "FastPathRule", "FastPathSettings"]


class FastPathRule(_Section):
    """Questions answered without the model: plain lowercase phrases, each matched against the
    whole normalised question (no pattern syntax), and the answer they get."""

    name: str = Field(min_length=1)
    phrases: list[str] = Field(min_length=1)
    answer: str = Field(min_length=1)


class FastPathSettings(_Section):
    """Greetings, thanks and empty questions, answered from a table before any retrieval or
    model call."""

    enabled: bool
    empty_answer: str = Field(min_length=1, description="a question with no letter nor digit")
    rules: list[FastPathRule] = Field(default_factory=list)


class ChatSettings(_Section):
    """The chat path: history, retrieval sizes, the prompt budget, and how many chat-like
    requests (knowledge and agent chat, `/v1` chat completions, the MCP `ask`) may run at once."""

    history_turns: int
    history_max_messages: int
    top_k: int
    passage_join_max_overlap: int = Field(ge=0)
    max_query_chars: int
    max_kbs: int = Field(gt=0, description="bases of a chat scope or a session's kb_ids")
    max_knowledge_ids: int = Field(gt=0, description="entries of a chat request's knowledge_ids")
    messages_page_size: int = Field(gt=0, description="a session's messages read by default")
    max_messages_page_size: int = Field(gt=0, description="a session's messages read at most")
    context_max_chars: int
    answer_max_tokens: int
    entity_max_tokens: int = Field(gt=0)
    decompose: bool = Field(description="split a multi-part question into sub-questions")
    decompose_max_questions: int = Field(ge=2)
    decompose_max_tokens: int = Field(gt=0)
    sub_answer_max_tokens: int = Field(gt=0)
    reference_excerpt_chars: int
    agent_max_steps: int = Field(ge=1)
    agent_max_reflections: int = Field(ge=0)
    agent_max_answer_retries: int = Field(ge=0)
    agent_max_calls_per_step: int = Field(ge=1)
    agent_graph_max_items: int = Field(ge=1)
    max_concurrent_per_key: int = Field(
        ge=0, description="chat-like requests of one API key at once per API process; 0: no cap"
    )
    busy_retry_after_s: int = Field(gt=0, description="Retry-After of a 429 chat_busy")
    worker_threads: int = Field(
        gt=0,
        description="threads the chat-like requests' blocking work runs on, apart from "
        "the shared pool of the other routes",
    )
    fast_path: FastPathSettings
    interaction_log: bool = Field(description="keep each finished turn as a ChatML record")
    interaction_export_max: int = Field(gt=0, description="records one export returns at most")
