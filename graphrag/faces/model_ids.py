"""Knowledge bases named as models: `kb/<name>`, the base's id, or several joined by `+`.

A model id is first read whole, so a base whose name holds `+` is still found by its name;
only when the whole id names no base is it split into parts, each naming one base
(`kb/handbook+kb/policies`, or ids). Only the caller's own live bases are ever found.

A model id longer than `faces.max_model_id_chars` or of more than `chat.max_kbs` parts is
refused before any lookup; the whole id and its parts are then looked up in one query.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from pydantic import BaseModel
from sqlalchemy.orm import Session

from graphrag.errors import InvalidInputError, NotFoundError, UnknownModelError
from graphrag.kb.schemas import KnowledgeBasePublic
from graphrag.kb.service import find_live_kbs, list_kbs
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


def _as_id(term: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(term)
    except ValueError:
        return None


class _Found:
    """The live bases one query found for a set of terms, and how each term reads them.

    A term is `kb/<name>` or an id; a `bare` term may also be a plain name, tried after the id.
    """

    def __init__(
        self, session: Session, tenant_id: uuid.UUID, terms: Iterable[tuple[str, bool]]
    ) -> None:
        names: set[str] = set()
        ids: set[uuid.UUID] = set()
        for term, bare in terms:
            if term.startswith(KB_MODEL_PREFIX):
                names.add(term.removeprefix(KB_MODEL_PREFIX))
                continue
            kb_id = _as_id(term)
            if kb_id is not None:
                ids.add(kb_id)
            if bare:
                names.add(term)
        rows = find_live_kbs(session, tenant_id, names, ids)
        self._by_name = {name: kb_id for kb_id, name in rows}
        self._ids = {kb_id for kb_id, _ in rows}

    def get(self, term: str, *, bare: bool = False) -> uuid.UUID | None:
        """The base `term` names, if the query found it."""
        if term.startswith(KB_MODEL_PREFIX):
            return self._by_name.get(term.removeprefix(KB_MODEL_PREFIX))
        kb_id = _as_id(term)
        if kb_id is not None and kb_id in self._ids:
            return kb_id
        return self._by_name.get(term) if bare else None


def _parts(settings: Settings, model: str) -> list[str]:
    """The parts of a model id, refused (422, 400 under /v1) when it is too long or too many."""
    max_chars, max_parts = settings.faces.max_model_id_chars, settings.chat.max_kbs
    if len(model) > max_chars:
        raise InvalidInputError(
            f"the model id is longer than {max_chars} characters", param="model", limit=max_chars
        )
    parts = [part.strip() for part in model.split(MULTI_KB_SEPARATOR)]
    if len(parts) > max_parts:
        raise InvalidInputError(
            f"the model id names more than {max_parts} knowledge bases",
            param="model",
            limit=max_parts,
        )
    return parts


def resolve_model(
    session: Session, settings: Settings, tenant_id: uuid.UUID, model: str, *, bare: bool = False
) -> list[uuid.UUID]:
    """The bases a model id names, in its order; `UnknownModelError` if any part names none.

    `bare`: the whole id may also be a base's plain name (the MCP tools' `kb` argument).
    """
    parts = _parts(settings, model)
    whole = model.strip()
    several = len(parts) > 1
    found = _Found(session, tenant_id, [(whole, bare), *((p, False) for p in parts if several)])
    whole_id = found.get(whole, bare=bare)
    if whole_id is not None:
        return [whole_id]
    ids = [found.get(part) for part in parts] if several else [None]
    if any(kb_id is None for kb_id in ids):
        raise UnknownModelError(
            "the model does not exist or you do not have access to it", param="model"
        )
    return list(dict.fromkeys(kb_id for kb_id in ids if kb_id is not None))


def resolve_kb(session: Session, tenant_id: uuid.UUID, kb: str) -> uuid.UUID:
    """The one base `kb` names (a name, `kb/<name>` or an id); `NotFoundError` otherwise."""
    term = kb.strip()
    found = _Found(session, tenant_id, [(term, True)]).get(term, bare=True)
    if found is None:
        raise NotFoundError("knowledge base not found", kb=kb)
    return found
