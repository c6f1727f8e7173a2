"""The stages of a chat turn, one function each, bound to the event they handle.

Each takes the services and the turn and writes its part of the turn, so each can be tested
alone with fakes of the ports it uses.
"""

from __future__ import annotations

import logging

from sqlalchemy import select

from graphrag.chat.query_entities import extract_query_entities
from graphrag.chat.schemas import Reference
from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.db.engine import session_scope
from graphrag.db.models import Message
from graphrag.errors import LlmUnavailableError
from graphrag.llm.prompts import ChatMessage, load_prompt
from graphrag.search.graph_complement import EntityGraphComplement
from graphrag.search.models import MatchType, RetrievalRequest
from graphrag.search.retrieval import retrieve

__all__ = [
    "build_prompt",
    "chunk_search",
    "entity_search",
    "load_history",
    "merge_hits",
    "recall_memory",
    "understand_query",
]

log = logging.getLogger(__name__)

ANSWER_PROMPT = "answer"


def load_history(services: ChatServices, turn: ChatTurn) -> None:
    """The session's completed messages, oldest first, fitted to the context budget.

    With the agent memory, the conversation is compacted by its rules (older messages folded
    into one stored summary past the budget, the last ones intact); without it, the last
    `history_turns` messages are kept.
    """
    chat = services.settings.chat
    with session_scope(services.sessions) as session:
        rows = session.execute(
            select(Message.role, Message.content)
            .where(Message.session_id == turn.session_id, Message.completed.is_(True))
            .order_by(Message.created_at.desc(), Message.id.desc())
            .limit(chat.history_max_messages)
        ).all()
    history = [
        ChatMessage(role=row.role.value, content=row.content)
        for row in reversed(rows)
        if row.role.value in ("user", "assistant")
    ]
    if services.memory is None:
        turn.history = history[-chat.history_turns :] if chat.history_turns else []
        return
    turn.history_summary, turn.history = services.memory.fit_history(
        turn.tenant_id, turn.owner, turn.session_id, history
    )


def recall_memory(services: ChatServices, turn: ChatTurn) -> None:
    """At a session's first turn, what the agent memory holds about this owner and question.

    Recall counts the facts it returns as accessed, so it runs once per session, not per turn.
    """
    if services.memory is not None and not turn.history:
        turn.memory_context = services.memory.recall(turn.tenant_id, turn.owner, turn.request.query)


def understand_query(services: ChatServices, turn: ChatTurn) -> None:
    """The retrieval query (a follow-up carries the previous question) and, when a base in
    scope has its graph on, the entity names of the question."""
    previous = [m.content for m in turn.history if m.role == "user"]
    question = turn.request.query
    turn.retrieval_query = f"{previous[-1]}\n{question}" if previous else question
    if not turn.graph_kb_ids:
        return
    try:
        turn.entities = extract_query_entities(services.llm, question, services.settings.extraction)
    except LlmUnavailableError as exc:
        # The graph only adds to the other methods: without entity names it adds nothing.
        log.warning("entity extraction failed, graph search skipped: %s", exc.message)


def chunk_search(services: ChatServices, turn: ChatTurn) -> None:
    """Vector + keyword search over the scope, fused by weighted RRF."""
    search = services.settings.search
    request = RetrievalRequest(
        query=turn.retrieval_query,
        scopes=turn.scopes,
        knowledge_ids=turn.request.knowledge_ids,
        top_k=services.settings.chat.top_k,
        vector_threshold=search.vector_threshold,
        keyword_threshold=search.keyword_threshold,
        use_graph=False,
    )
    with session_scope(services.sessions) as session:
        turn.chunk_hits = retrieve(session, services.embedder, search, request).hits


def entity_search(services: ChatServices, turn: ChatTurn) -> None:
    """Chunks of the question's entities, found with SearchNode in each graph-enabled base."""
    if not (turn.entities and turn.graph_kb_ids):
        return
    complement = EntityGraphComplement(
        services.graph,
        turn.entities,
        services.settings.chat.graph_max_chunks,
        turn.request.knowledge_ids,
    )
    with session_scope(services.sessions) as session:
        turn.graph_hits = complement(session, turn.request.query, turn.graph_kb_ids, [])
    turn.graph_truncated = complement.truncated


def merge_hits(services: ChatServices, turn: ChatTurn) -> None:
    """Search hits first, then graph chunks the search did not return, marked `graph`."""
    seen = {hit.chunk_id for hit in turn.chunk_hits}
    extra = [
        hit.model_copy(update={"match_type": MatchType.GRAPH})
        for hit in turn.graph_hits
        if hit.chunk_id not in seen
    ]
    turn.hits = turn.chunk_hits + extra[: services.settings.chat.graph_max_chunks]


def build_prompt(services: ChatServices, turn: ChatTurn) -> None:
    """Numbered passages within the character budget, the references, and the messages."""
    chat = services.settings.chat
    budget = chat.context_max_chars
    passages: list[str] = []
    for hit in turn.hits:
        text = hit.content.strip()
        if not text or len(text) > budget:
            continue
        budget -= len(text)
        n = len(passages) + 1
        where = f"{hit.file_name}, page {hit.page}" if hit.page else hit.file_name
        passages.append(f"[{n}] ({where})\n{text}")
        turn.references.append(Reference.from_hit(n, hit, text[: chat.reference_excerpt_chars]))
    template = load_prompt(ANSWER_PROMPT, services.settings.extraction.prompt_templates_dir)
    rendered = template.render(
        question=turn.request.query, passages="\n\n".join(passages) or "(no passage found)"
    )
    system = rendered.system or ""
    if turn.history_summary:
        system = f"{system}\n\nThe conversation so far, summarised:\n{turn.history_summary}"
    if turn.memory_context:
        system = f"{system}\n\nWhat you remember about this user:\n{turn.memory_context}"
    turn.messages = [
        ChatMessage(role="system", content=system),
        *turn.history,
        ChatMessage(role="user", content=rendered.user or turn.request.query),
    ]
