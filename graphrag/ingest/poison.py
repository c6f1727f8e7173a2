"""Poison documents: an attempt whose processing keeps dying with its worker (out of memory, a
hard time limit) is failed instead of being delivered again and again.

The count lives on the document row and is raised in the claim's own committed transaction,
before any parsing, so a run that is killed still leaves its count behind.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, update
from sqlalchemy.orm import Session

from graphrag.db.enums import ParseStatus
from graphrag.db.models import Knowledge

__all__ = ["fail_if_poisoned", "give_up_stuck", "poisoned_reason", "stuck_reason"]

log = logging.getLogger(__name__)


def poisoned_reason(deaths: int) -> str:
    return (
        f"processing stopped {deaths} times without finishing (the worker died: out of memory, "
        "killed or over its time limit); the document is not processed again"
    )


def stuck_reason(requeues: int) -> str:
    return f"the document stayed stuck after {requeues} re-enqueues; it is not processed again"


def fail_if_poisoned(
    session: Session, knowledge_id: uuid.UUID, deliveries: int, max_deliveries: int
) -> bool:
    """Fail the locked document once `max_deliveries` runs of it never settled (True: the
    caller stops); otherwise the caller's claim counts this delivery."""
    if deliveries < max_deliveries:
        return False
    reason = poisoned_reason(deliveries)
    session.execute(
        update(Knowledge)
        .where(Knowledge.id == knowledge_id)
        .values(
            parse_status=ParseStatus.FAILED,
            error=reason,
            pending_subtasks_count=0,
            status_changed_at=func.now(),
        )
    )
    log.warning("document %s failed: %s", knowledge_id, reason)
    return True


def give_up_stuck(session: Session, stuck: Sequence[Any], max_requeues: int) -> list[uuid.UUID]:
    """Of the stuck documents (rows of id, attempt, status, locked by the caller), fail those
    re-enqueued `max_requeues` times already and count one more re-enqueue on the others.

    A deletion is never given up: its purge is resumable and must finish.
    """
    working = [row[0] for row in stuck if row[2] in ParseStatus.working()]
    if not working:
        return []
    exhausted = list(
        session.execute(
            update(Knowledge)
            .where(Knowledge.id.in_(working), Knowledge.requeues >= max_requeues)
            .values(
                parse_status=ParseStatus.FAILED,
                error=stuck_reason(max_requeues),
                pending_subtasks_count=0,
                status_changed_at=func.now(),
            )
            .returning(Knowledge.id)
        ).scalars()
    )
    session.execute(
        update(Knowledge)
        .where(Knowledge.id.in_(working), Knowledge.id.notin_(exhausted))
        .values(requeues=Knowledge.requeues + 1)
    )
    return exhausted
