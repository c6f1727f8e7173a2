"""Knowledge bases named as models: `kb/<name>`, the base's id, or several joined by `+`.

A model id is first read whole, so a base whose name holds `+` is still found by its name;
only when the whole id names no base is it split into parts, each naming one base
(`kb/handbook+kb/policies`, or ids). Only the caller's own live bases are ever found.
"""

from __future__ import annotations

import uuid

from pydantic import BaseModel
from sqlalchemy.orm import Session

from graphrag.errors import NotFoundError, UnknownModelError
from graphrag.ingest.batch import find_kb_by_name
from graphrag.kb.schemas import KnowledgeBasePublic
from graphrag.kb.service import get_kb_row, list_kbs
from graphrag.settings import Settings

__all__ = [
    "KB_MODEL_PREFIX",
    "MULTI_KB_SEPARATOR",
    "KbModel",
    "kb_models",
    "model_name",
    "resolve_kb",
    "resolve_model",
]

KB_MODEL_PREFIX = "kb/"
MULTI_KB_SEPARATOR = "+"


class KbModel(BaseModel):
    """One knowledge base under one of its two model ids."""

    id: str
    kb_id: uuid.UUID
    name: str
    created: int
    graph_on: bool


def model_name(kb_name: str) -> str:
    """The readable model id of a base."""
    return f"{KB_MODEL_PREFIX}{kb_name}"


def kb_models(session: Session, settings: Settings, tenant_id: uuid.UUID) -> list[KbModel]:
    """Every live base of the tenant, each as `kb/<name>` and as its id."""
    models: list[KbModel] = []
    for kb in list_kbs(session, settings, tenant_id):
        models += [_model(model_name(kb.name), kb), _model(str(kb.id), kb)]
    return models


def _model(model_id: str, kb: KnowledgeBasePublic) -> KbModel:
    return KbModel(
        id=model_id,
        kb_id=kb.id,
        name=kb.name,
        created=int(kb.created_at.timestamp()),
        graph_on=kb.graph_on,
    )


def _one(session: Session, tenant_id: uuid.UUID, term: str) -> uuid.UUID | None:
    if term.startswith(KB_MODEL_PREFIX):
        return find_kb_by_name(session, tenant_id, term.removeprefix(KB_MODEL_PREFIX))
    try:
        kb_id = uuid.UUID(term)
    except ValueError:
        return None
    try:
        return get_kb_row(session, tenant_id, kb_id).id
    except NotFoundError:
        return None


def resolve_model(session: Session, tenant_id: uuid.UUID, model: str) -> list[uuid.UUID]:
    """The bases a model id names, in its order; `UnknownModelError` if any part names none."""
    whole = _one(session, tenant_id, model.strip())
    if whole is not None:
        return [whole]
    parts = [part.strip() for part in model.split(MULTI_KB_SEPARATOR)]
    found = [_one(session, tenant_id, part) for part in parts] if len(parts) > 1 else [None]
    if any(kb_id is None for kb_id in found):
        raise UnknownModelError(
            "the model does not exist or you do not have access to it", param="model"
        )
    return list(dict.fromkeys(kb_id for kb_id in found if kb_id is not None))


def resolve_kb(session: Session, tenant_id: uuid.UUID, kb: str) -> uuid.UUID:
    """The one base `kb` names (a name, `kb/<name>` or an id); `NotFoundError` otherwise."""
    term = kb.strip()
    found = _one(session, tenant_id, term)
    if found is None and not term.startswith(KB_MODEL_PREFIX):
        found = _one(session, tenant_id, model_name(term))
    if found is None:
        raise NotFoundError("knowledge base not found", kb=kb)
    return found
