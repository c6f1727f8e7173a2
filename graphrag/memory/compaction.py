"""Compaction of a long session with its summary kept in the archival memory, once.

The chat path calls `compact_session` every turn with the whole conversation. When the budget
forces a summary, it is stored as the session's single `summary` fact: its id is derived from
(tenant, owner, session), so a later turn whose summary differs replaces that fact's text
instead of adding another, and one whose summary is unchanged writes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from graphrag.llm.messages import ChatMessage
from graphrag.memory.context import MemoryContext
from graphrag.memory.context_budget import BudgetedContext, fit_context
from graphrag.memory.records import FactKind, MemoryOwner, NewFact
from graphrag.value_model import ValueModel

__all__ = ["CompactionResult", "compact_session", "summary_fact_id"]

# Namespace of the summary ids (any fixed uuid works; this one is ours).
_SUMMARY_NAMESPACE = uuid.UUID("5b0c7a52-3f0e-4d0e-9a57-6a8f3c1d2e41")


class CompactionResult(ValueModel):
    """The fitted context, and whether the session's summary fact was created or replaced."""

    context: BudgetedContext
    summary_id: uuid.UUID | None = None
    summary_created: bool = False


def summary_fact_id(owner: MemoryOwner, session_id: uuid.UUID) -> uuid.UUID:
    """The id of the session's summary fact (the same on every turn)."""
    return uuid.uuid5(_SUMMARY_NAMESPACE, f"{owner.tenant_id}/{owner.owner}/{session_id}")


def compact_session(
    ctx: MemoryContext,
    owner: MemoryOwner,
    session_id: uuid.UUID,
    messages: Sequence[ChatMessage],
    reserve_chars: int = 0,
) -> CompactionResult:
    """Fit `messages` to the budget less `reserve_chars` (the rest of the prompt: passages,
    memory, instructions); a summary, if one was made, is stored as the session's one."""
    settings = ctx.settings
    if reserve_chars:
        room = max(settings.compact_threshold_chars - reserve_chars, 0)
        settings = settings.model_copy(update={"compact_threshold_chars": room})
    fitted = fit_context(messages, settings)
    if fitted.summary is None or not ctx.archival:
        # Without the archive (Neo4j off) the summary still leads the prompt, unstored.
        return CompactionResult(context=fitted)
    fact = NewFact(
        text=fitted.summary,
        kind=FactKind.SUMMARY,
        importance=ctx.settings.importance.summary,
        session_id=session_id,
    )
    fact_id = summary_fact_id(owner, session_id)
    stored = ctx.archive.get(owner, fact_id)
    if stored is not None and stored.text == fitted.summary:
        return CompactionResult(context=fitted, summary_id=fact_id)
    created = ctx.archive.upsert(
        owner, fact_id, fact, ctx.embedder.embed_query(fitted.summary), ctx.clock()
    )
    return CompactionResult(context=fitted, summary_id=fact_id, summary_created=created)
