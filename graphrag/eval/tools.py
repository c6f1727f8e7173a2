"""The MCP tools over evaluation: start a run of a set, read a run (status and metrics)."""

from __future__ import annotations

import uuid

from graphrag.auth.models import Capability, Principal
from graphrag.db.engine import session_scope
from graphrag.errors import InvalidInputError
from graphrag.eval import runs
from graphrag.eval.schemas import EvalConfig, EvalRunCreate, EvalRunPublic
from graphrag.faces.model_ids import resolve_kb
from graphrag.faces.services import FaceServices

__all__ = ["evaluation_run", "start_evaluation"]


def _id(value: str, what: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError as exc:
        raise InvalidInputError(f"{what} must be an id", id=value) from exc


def start_evaluation(
    services: FaceServices,
    principal: Principal,
    kb: str,
    eval_set_id: str,
    graph: bool | None = None,
    top_k: int | None = None,
    answer: bool = False,
) -> EvalRunPublic:
    """Queue a run of one of the base's sets (needs `write`)."""
    tenant = principal.require(Capability.WRITE)
    body = EvalRunCreate(
        eval_set_id=_id(eval_set_id, "eval_set_id"),
        config=EvalConfig(graph=graph, top_k=top_k, answer=answer),
    )
    with session_scope(services.chat.sessions) as session:
        kb_id = resolve_kb(session, tenant, kb)
        run = runs.create_run(session, services.settings, tenant, kb_id, body)
    services.relay.kick()  # the run's task committed with it: the relay sends it now
    return run


def evaluation_run(
    services: FaceServices, principal: Principal, kb: str, run_id: str
) -> EvalRunPublic:
    """A run's status, progress and (once done) metrics (needs `read`)."""
    tenant = principal.require(Capability.READ)
    with session_scope(services.chat.sessions) as session:
        kb_id = resolve_kb(session, tenant, kb)
        return runs.get_run(session, tenant, kb_id, _id(run_id, "run_id"))
