"""Agent memory: core memory, recall memory (the conversation log) and archival facts.

Stores, all scoped to an owner = (tenant, owner name):
- core memory (`core_memory.py`, PostgreSQL): short sections always rendered into the prompt;
- recall memory (`recall_log.py`, PostgreSQL): every message of every session;
- archival facts (`archive.py`, Neo4j `:Memory` nodes with a cosine vector index) linked to an
  entity graph (`entity_graph.py`: `:MemoryEntity`, MENTIONS, weighted RELATES, SAME_AS to the
  knowledge bases' entities).

For the chat path:
- `record_exchange(session, owner, session_id, user_text, assistant_text, entities)`
  logs one turn (both messages) in the caller's transaction and keeps the entity names for
  the links made when the session closes;
- `session_start_recall(ctx, owner, message)` is the three-phase recall of a session's first
  message, `render_memory_block(read_core(...), recall)` the system-prompt block;
- `compact_session(ctx, owner, session_id, messages)` fits the conversation to its budget
  (`context_budget.py`) and keeps the session's one summary fact;
- `close_session(ctx, owner, session_id)` (Celery task `memory.close_session`) turns the
  session into facts; idle sessions are closed by the `memory.close_idle_sessions` sweep.
"""

from graphrag.memory.clock import Clock, system_clock
from graphrag.memory.compaction import compact_session
from graphrag.memory.context import MemoryContext
from graphrag.memory.core_memory import read_core
from graphrag.memory.prompt_block import render_memory_block
from graphrag.memory.recall import session_start_recall
from graphrag.memory.recall_log import record_exchange
from graphrag.memory.records import MemoryOwner
from graphrag.memory.session_close import close_session

__all__ = [
    "Clock",
    "MemoryContext",
    "MemoryOwner",
    "close_session",
    "compact_session",
    "read_core",
    "record_exchange",
    "render_memory_block",
    "session_start_recall",
    "system_clock",
]
