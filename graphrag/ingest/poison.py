"""Poison documents: a document whose processing keeps dying with its worker (out of memory, a
hard time limit) is failed instead of being delivered again and again.

The count lives on the document row: raised in the claim's own committed transaction, before
any parsing, and taken back when the run ends in any other way, so a run that is killed leaves
its count behind. It spans the document's attempts: a re-parse does not refill the budget.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from graphrag.db.enums import ParseStatus
from graphrag.db.lifecycle import fail_poisoned, give_up
from graphrag.db.models import Knowledge

__all__ = ["fail_if_poisoned", "give_up_stuck", "poisoned_reason", "stuck_reason"]

log = logging.getLogger(__name__)


def poisoned_reason(deaths: int, budget: int) -> str:
    return (
        f"processing stopped {deaths} times without finishing (the worker died: out of memory, "
        f"killed or over its time limit), re-parses included; past the budget of {budget} "
        "(ingest.max_deliveries) the document is not processed again"
    )


def stuck_reason(requeues: int) -> str:
    return f"the document stayed stuck after {requeues} re-enqueues; it is not processed again"


def fail_if_poisoned(
    session: Session, knowledge_id: uuid.UUID, attempt: int, deaths: int, budget: int
) -> bool:
    """Fail the locked document once `budget` runs of it never settled, over all its attempts
    (True: the caller stops); otherwise the caller's claim counts this delivery."""
    if deaths < budget:
        return False
    reason = poisoned_reason(deaths, budget)
    fail_poisoned(session, knowledge_id, attempt, reason)
    log.warning("document %s failed: %s", knowledge_id, reason)
    return True


def give_up_stuck(session: Session, stuck: Sequence[Any], max_requeues: int) -> list[uuid.UUID]:
    """Of the stuck documents (rows of id, attempt, status, locked by the caller), fail those
    re-enqueued `max_requeues` times already and count one more re-enqueue on the others.

    A deletion is never given up: its purge is resumable and must finish.
    """
    working = [(row[0], row[1]) for row in stuck if row[2] in ParseStatus.working()]
    if not working:
        return []
    exhausted = give_up(session, working, max_requeues, stuck_reason(max_requeues))
    others = [doc_id for doc_id, _ in working if doc_id not in exhausted]
    session.execute(
        update(Knowledge).where(Knowledge.id.in_(others)).values(requeues=Knowledge.requeues + 1)
    )
    return exhausted
