"""The memory behind the chat's `MemoryPort`: recall before a turn, record after it."""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from graphrag.db.engine import session_scope
from graphrag.llm.messages import ChatMessage
from graphrag.memory.compaction import compact_session
from graphrag.memory.context import MemoryContext
from graphrag.memory.core_memory import read_core, render_core_block
from graphrag.memory.prompt_block import render_memory_block
from graphrag.memory.recall import session_start_recall
from graphrag.memory.recall_log import record_exchange
from graphrag.memory.records import MemoryOwner

__all__ = ["ChatMemory"]


class ChatMemory:
    """Adapter of `MemoryContext` to the chat pipeline's memory port."""

    def __init__(self, ctx: MemoryContext) -> None:
        self.ctx = ctx

    def recall(self, tenant_id: uuid.UUID, owner: str, query: str) -> str:
        """Core memory and the three-phase recall for `query`, as a system-prompt block.

        The facts returned count as accessed: call it once per session start (or per turn
        when every turn should refresh what is recalled). Without the archive (Neo4j off),
        core memory alone.
        """
        who = MemoryOwner(tenant_id=tenant_id, owner=owner)
        with session_scope(self.ctx.sessions) as db:
            core = read_core(db, who, self.ctx.settings)
        recalled = session_start_recall(self.ctx, who, query) if self.ctx.archival else None
        return render_memory_block(core, recalled, self.ctx.extraction.prompt_templates_dir)

    def core(self, tenant_id: uuid.UUID, owner: str) -> str:
        """Core memory alone, as a system-prompt block: PostgreSQL only, no fact is touched."""
        who = MemoryOwner(tenant_id=tenant_id, owner=owner)
        with session_scope(self.ctx.sessions) as db:
            core = read_core(db, who, self.ctx.settings)
        return render_core_block(core, self.ctx.extraction.prompt_templates_dir)

    def fit_history(
        self,
        tenant_id: uuid.UUID,
        owner: str,
        session_id: uuid.UUID,
        history: list[ChatMessage],
        reserve_chars: int = 0,
    ) -> tuple[str | None, list[ChatMessage]]:
        """The session compacted to the budget less `reserve_chars`; a summary made here is
        stored as the session's one."""
        who = MemoryOwner(tenant_id=tenant_id, owner=owner)
        fitted = compact_session(self.ctx, who, session_id, history, reserve_chars).context
        return fitted.summary, [m for m in fitted.messages if m.role in ("user", "assistant")]

    def record_exchange(
        self,
        session: Session,
        tenant_id: uuid.UUID,
        owner: str,
        session_id: uuid.UUID,
        user_text: str,
        assistant_text: str,
        entities: list[str],
    ) -> None:
        """Log the turn in recall memory, in the caller's transaction (see `record_exchange`)."""
        record_exchange(
            session,
            MemoryOwner(tenant_id=tenant_id, owner=owner),
            session_id,
            user_text,
            assistant_text,
            entities,
            clock=self.ctx.clock,
        )

    def forget_session(self, tenant_id: uuid.UUID, session_id: uuid.UUID) -> int:
        """Remove the archival facts learnt from the session (its recall log goes with the
        session's row, by the database's cascade); returns how many facts were removed.
        Without the archive (Neo4j off) no fact was ever learnt: nothing to remove."""
        if not self.ctx.archival:
            return 0
        return self.ctx.archive.delete_session_facts(tenant_id, session_id)
