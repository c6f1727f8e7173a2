"""Settings of the chat path."""

from __future__ import annotations

from pydantic import Field

from graphrag.settings.base import Section as _Section

__all__ = ["ChatSettings"]


class ChatSettings(_Section):
    """The chat path: history, retrieval sizes and the prompt budget."""

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
    agent_max_calls_per_step: int = Field(ge=1)
    agent_graph_max_items: int = Field(ge=1)
