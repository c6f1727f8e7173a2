"""The resolution task's work: completed documents' entities resolved against their base.

Queued by the settlement that completes a document (in its transaction), and again for the
documents whose links a deleted or re-parsed document withdrew. A document gone, or being
processed again meanwhile, is settled with nothing done: its next completion queues another.

The runs of one base take turns under a transaction-scoped PostgreSQL advisory lock (two
documents completed at the same moment would otherwise each miss the other's entities). A task
that finds the lock held does not wait for it: it leaves its outbox row live and ends, and the
run holding the lock takes that row when it is done with its own. So a burst of completions is
resolved by one run, `resolution.batch_documents` documents at a time (read, planned one after
the other and written together), and no worker thread sits waiting on a lock. The
holder looks for waiting rows again after it lets go of the lock (a task that found it held had
written its row before trying), so no row is left without a run to take it. For the same reason
the outbox relay sends one message for the rows of a base it finds due together: the rows were
written before the message went, so the run it starts, or the run holding the turn, takes them;
a task whose document went meanwhile (its base unknown) hands them back to the relay.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, fields

from sqlalchemy import Row, Select, func, select
from sqlalchemy.orm import Session

from graphrag.db.engine import session_scope
from graphrag.db.enums import OutboxStatus, ParseStatus
from graphrag.db.models import Knowledge, OutboxTask
from graphrag.db.outbox import TaskLease, TaskName, enqueue, resolve_entities, settle_all
from graphrag.graph.resolution.resolver import ResolutionReport, resolve_documents
from graphrag.graph.resolution.store import Neo4jResolutionStore
from graphrag.ingest.graph.chunk_extraction import GraphContext

__all__ = ["base_turn", "resolve_document_entities"]

log = logging.getLogger(__name__)

# The advisory lock space of resolution runs (the two-key form: this class, then the base).
_RESOLUTION_LOCKS = 0x7265736F


def _base_lock(kb_id: uuid.UUID) -> int:
    """A signed 32-bit key of the base. Two bases sharing a key take turns; a row the other
    base's holder does not take waits for the outbox's visibility timeout to be sent again."""
    return (kb_id.int & 0xFFFFFFFF) - (1 << 31)


def base_turn(kb_id: uuid.UUID) -> Select[bool]:
    """The statement that takes the base's turn for the transaction, or answers False."""
    return select(func.pg_try_advisory_xact_lock(_RESOLUTION_LOCKS, _base_lock(kb_id)))


def _waiting(
    session: Session, kb_id: uuid.UUID, limit: int
) -> Sequence[Row[uuid.UUID, ParseStatus]]:
    """The base's documents whose resolution is owed (a live outbox row), oldest first."""
    return session.execute(
        select(Knowledge.id, Knowledge.parse_status)
        .join(OutboxTask, OutboxTask.knowledge_id == Knowledge.id)
        .where(
            Knowledge.kb_id == kb_id,
            OutboxTask.task_name == TaskName.RESOLVE_ENTITIES.value,
            OutboxTask.status.in_(OutboxStatus.live()),
        )
        .order_by(OutboxTask.id)
        .limit(limit)
    ).all()


@dataclass
class _Run:
    """One task's turn at its base: what it resolved, and until when it takes new documents."""

    ctx: GraphContext
    store: Neo4jResolutionStore
    kb_id: uuid.UUID
    deadline: float
    total: ResolutionReport | None = None

    def hold_turn(self) -> bool:
        """One hold of the base's lock: resolve the waiting documents, `batch_documents` at a
        time, and settle their rows. False when another run holds the lock (it takes this
        task's row).

        The lock's transaction only holds the lock and reads: each batch's rows are settled in
        a short transaction of their own, so a relay pass or a task renewing its lease never
        waits on a row this run has settled but not yet committed."""
        settings = self.ctx.settings.resolution
        with session_scope(self.ctx.sessions) as turn:
            if not turn.scalar(base_turn(self.kb_id)):
                return False
            waiting = _waiting(turn, self.kb_id, settings.run_documents)
            for start in range(0, len(waiting), settings.batch_documents):
                if time.monotonic() > self.deadline:
                    break
                batch = waiting[start : start + settings.batch_documents]
                completed = [doc for doc, status in batch if status is ParseStatus.COMPLETED]
                done = self._resolve(completed) if completed else []
                # A document not completed (gone, or processed again) is settled with nothing
                # done; one the deadline left unplanned keeps its row for the next run.
                ended = [doc for doc, status in batch if status is not ParseStatus.COMPLETED]
                with session_scope(self.ctx.sessions) as session:
                    settle_all(
                        session, TaskName.RESOLVE_ENTITIES, [(str(d),) for d in ended + done]
                    )
                if len(done) < len(completed):
                    break
        return True

    def _resolve(self, knowledge_ids: list[uuid.UUID]) -> list[uuid.UUID]:
        """Resolve the documents together; the ones done before the run's deadline."""
        ctx = self.ctx
        report, done = resolve_documents(
            self.store,
            ctx.llm,
            ctx.settings.resolution,
            self.kb_id,
            knowledge_ids,
            ctx.settings.extraction.prompt_templates_dir,
            self.deadline,
        )
        self._add(report)
        return done

    def _add(self, report: ResolutionReport) -> None:
        if self.total is None:
            self.total = report
            return
        sums = {
            f.name: getattr(self.total, f.name) + getattr(report, f.name) for f in fields(report)
        }
        self.total = ResolutionReport(**sums)

    def hand_over(self) -> bool:
        """After a turn: True when documents still wait and this run may take another turn;
        past its budget, the oldest waiting row is sent again for a new run to take them."""
        with session_scope(self.ctx.sessions) as session:
            left = _waiting(session, self.kb_id, 1)
            if not left:
                return False
            if time.monotonic() <= self.deadline:
                return True
            enqueue(session, resolve_entities(left[0].id), rearm=True)
        return False


def resolve_document_entities(
    ctx: GraphContext, knowledge_id: uuid.UUID, lease: TaskLease
) -> ResolutionReport | None:
    """Resolve the document's unresolved entities, with those of the base's other documents
    waiting meanwhile; None when another run did (or will do) the work, or there was none."""
    with session_scope(ctx.sessions) as session:
        owed = lease.renew(session)
        kb_id = session.scalar(select(Knowledge.kb_id).where(Knowledge.id == knowledge_id))
        if kb_id is None or ctx.resolution is None:
            # The document went (or this worker has no graph): the base's rows this task's
            # message stood for go back to the relay, which sends them anew.
            lease.hand_back_shared(session)
            lease.settle(session)
            return None
    if not owed:
        return None  # another run settled it
    run = _Run(ctx, ctx.resolution, kb_id, time.monotonic() + ctx.settings.resolution.run_budget_s)
    while run.hold_turn():
        if not run.hand_over():
            break
    if run.total is not None:
        log.info("resolution run of base %s: %s", kb_id, run.total)
    return run.total
