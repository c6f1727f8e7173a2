"""The stages of a chat turn, one function each, called in order by `pipeline.prepare_turn`.

Each takes the services and the turn and writes its part of the turn, so each can be tested
alone with fakes of the ports it uses.
"""

from __future__ import annotations

import logging

from sqlalchemy import select

from graphrag.chat.decompose import decompose_question
from graphrag.chat.prompt_budget import fit_prompt
from graphrag.chat.query_entities import extract_query_entities
from graphrag.chat.schemas import Reference
from graphrag.chat.turn import ChatServices, ChatTurn
from graphrag.db.engine import session_scope
from graphrag.db.models import Message
from graphrag.errors import LlmUnavailableError
from graphrag.llm.messages import ChatMessage
from graphrag.llm.prompts import PromptTemplate, load_prompt
from graphrag.search.models import RetrievalRequest, SearchHit
from graphrag.search.passages import Passage, join_neighbours
from graphrag.search.retrieval import GraphSource, retrieve

__all__ = [
    "build_prompt",
    "chunk_search",
    "decompose_query",
    "load_history",
    "merge_hits",
    "recall_memory",
    "understand_query",
]

log = logging.getLogger(__name__)

ANSWER_PROMPT = "answer"
PARTS_FRAGMENT = "parts"


def load_history(services: ChatServices, turn: ChatTurn) -> None:
    """The session's completed messages, oldest first, fitted to the context budget.

    With the agent memory, the conversation is compacted by its rules (older messages folded
    into one stored summary past the budget, the last ones intact); without it, the last
    `history_turns` messages are kept. A turn without a session keeps the history it came with.
    """
    if turn.session_id is None:
        return  # a stateless turn: the caller gave the history
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
    turn.loaded_history = history
    if services.memory is None:
        turn.history = history[-chat.history_turns :] if chat.history_turns else []
        return
    turn.history_summary, turn.history = services.memory.fit_history(
        turn.tenant_id, turn.owner, turn.session_id, history
    )


def recall_memory(services: ChatServices, turn: ChatTurn) -> None:
    """What the agent memory holds about this owner: core memory on every turn; at a session's
    first turn also the facts recalled for the question.

    Recall counts the facts it returns as accessed, so it runs once per session, not per turn;
    core memory is the owner's standing profile, read each time.
    """
    if services.memory is None:
        return
    if turn.history:
        turn.memory_context = services.memory.core(turn.tenant_id, turn.owner)
    else:
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
        settings = services.settings
        turn.entities = extract_query_entities(
            services.llm,
            question,
            settings.extraction,
            settings.chat.entity_max_tokens,
            turn.usage,
        )
    except LlmUnavailableError as exc:
        # The graph only adds to the other methods: without entity names it adds nothing.
        log.warning("entity extraction failed, graph search skipped: %s", exc.message)


def decompose_query(services: ChatServices, turn: ChatTurn) -> None:
    """The sub-questions of a multi-part or multi-hop question (`chat.decompose`); none for a
    simple one, or when the model cannot be reached (the question then goes on whole)."""
    settings = services.settings
    if not settings.chat.decompose:
        return
    try:
        turn.sub_questions = decompose_question(
            services.llm, turn.request.query, settings.chat, settings.extraction, turn.usage
        )
    except LlmUnavailableError as exc:
        log.warning("question split failed, asked whole: %s", exc.message)


def chunk_search(services: ChatServices, turn: ChatTurn) -> None:
    """Vector, keyword and (for graph-enabled bases) graph lists, fused by weighted RRF.

    The graph list is seeded by the question's words and the entity names found in it; the
    request's `use_graph` turns it off. With sub-questions, each is searched too and the lists
    are interleaved (the whole question's first), so that every part brings its best passages.
    """
    search = services.settings.search
    graph = GraphSource(store=services.graph, entities=turn.entities)
    lists: list[list[SearchHit]] = []
    with session_scope(services.sessions) as session:
        for query in (turn.retrieval_query, *turn.sub_questions):
            request = RetrievalRequest(
                query=query,
                scopes=turn.scopes,
                knowledge_ids=turn.request.knowledge_ids,
                top_k=services.settings.chat.top_k,
                vector_threshold=search.vector_threshold,
                keyword_threshold=search.keyword_threshold,
                use_graph=bool(turn.graph_kb_ids),
            )
            result = retrieve(session, services.embedder, search, request, graph)
            lists.append(result.hits)
            turn.graph_truncated = turn.graph_truncated or result.graph_truncated
    turn.chunk_hits = _interleave(lists, services.settings.chat.top_k)


def _interleave(lists: list[list[SearchHit]], top_k: int) -> list[SearchHit]:
    """Round-robin over the lists, each chunk once, at most `top_k`; ranks renumbered."""
    seen: set[object] = set()
    merged: list[SearchHit] = []
    for depth in range(max((len(hits) for hits in lists), default=0)):
        for hits in lists:
            if depth < len(hits) and hits[depth].chunk_id not in seen:
                seen.add(hits[depth].chunk_id)
                merged.append(hits[depth])
    if len(lists) == 1:
        return merged[:top_k]
    return [hit.model_copy(update={"rank": n}) for n, hit in enumerate(merged[:top_k], 1)]


def merge_hits(services: ChatServices, turn: ChatTurn) -> None:
    """The fused hits, neighbouring chunks of one document joined into one passage each."""
    turn.hits = turn.chunk_hits
    turn.passages = join_neighbours(turn.hits, services.settings.chat.passage_join_max_overlap)


def _sub_answers(
    services: ChatServices, turn: ChatTurn, template: PromptTemplate, passages: str
) -> list[tuple[str, str]]:
    """Each sub-question answered on its own from the passages, in order (asked alone, a
    small model answers a hop it leaves out of the whole question); a failed call leaves the
    remaining parts unanswered for the final answer to handle."""
    answered: list[tuple[str, str]] = []
    reachable = True
    for sub in turn.sub_questions:
        answer = ""
        if reachable:
            try:
                messages = template.render(question=sub, passages=passages).messages()
                max_tokens = services.settings.chat.sub_answer_max_tokens
                reply = services.llm.complete(messages, max_tokens=max_tokens)
                turn.usage.add(reply.usage)
                answer = " ".join(reply.content.split())
            except LlmUnavailableError as exc:
                log.warning("sub-question not answered: %s", exc.message)
                reachable = False
        answered.append((sub, answer))
    return answered


def build_prompt(services: ChatServices, turn: ChatTurn) -> None:
    """Numbered passages within the character budget, the references, and the messages.

    A passage made of several neighbouring chunks is cited by one number; each of its chunks
    is a reference with that number. The whole prompt (history, summary, memory block,
    passages, question) is then fitted to `memory.compact_threshold_chars` (`prompt_budget`):
    the references name only the passages the prompt kept.
    """
    chat = services.settings.chat
    budget = chat.context_max_chars
    blocks: list[tuple[str, Passage]] = []
    for passage in turn.passages:
        text = passage.text
        if not text or len(text) > budget:
            continue
        budget -= len(text)
        first = passage.hits[0]
        where = f"{first.file_name}, page {first.page}" if first.page else first.file_name
        blocks.append((f"[{len(blocks) + 1}] ({where})\n{text}", passage))
    template = load_prompt(ANSWER_PROMPT, services.settings.extraction.prompt_templates_dir)
    question = turn.request.query
    if turn.sub_questions:
        joined = "\n\n".join(block for block, _ in blocks) or "(no passage found)"
        parts = "\n".join(
            f"{n}. {q}\n   {a}" if a else f"{n}. {q}"
            for n, (q, a) in enumerate(_sub_answers(services, turn, template, joined), 1)
        )
        question = f"{question}\n\n{template.render_fragment(PARTS_FRAGMENT, parts=parts)}"

    def compose(n: int, memory: str) -> list[ChatMessage]:
        passages = "\n\n".join(block for block, _ in blocks[:n])
        rendered = template.render(question=question, passages=passages or "(no passage found)")
        system = rendered.system or ""
        if turn.history_summary:
            system = f"{system}\n\nThe conversation so far, summarised:\n{turn.history_summary}"
        if memory:
            system = f"{system}\n\nWhat you remember about this user:\n{memory}"
        if turn.instructions:
            system = f"{system}\n\nThe caller's instructions:\n{turn.instructions}"
        return [
            ChatMessage(role="system", content=system),
            *turn.history,
            ChatMessage(role="user", content=rendered.user or turn.request.query),
        ]

    fitted = fit_prompt(services, turn, compose, len(blocks))
    for n, (_, passage) in enumerate(blocks[: fitted.passages], start=1):
        turn.references.extend(
            Reference.from_hit(n, hit, hit.content.strip()[: chat.reference_excerpt_chars])
            for hit in passage.hits
        )
    turn.messages = fitted.messages
