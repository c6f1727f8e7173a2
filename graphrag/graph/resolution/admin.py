"""An administrator's view and fixes of a key's resolution: audit, merge, split.

A fix is written as manual links and a pin per (document, key), so that no automatic run undoes
it and a re-parse of the document places its new nodes the same way.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from pydantic import BaseModel, Field

from graphrag.errors import EntityNotFoundError, InvalidInputError
from graphrag.graph.names import name_key
from graphrag.graph.resolution.store import KeyNode, Neo4jResolutionStore
from graphrag.settings import ResolutionSettings
from graphrag.text_input import Bounded, InputText, RequestModel

__all__ = [
    "KeptApartPublic",
    "MemberPublic",
    "MergeRequest",
    "ResolutionPublic",
    "ResolvedEntityPublic",
    "SplitRequest",
    "audit_key",
    "merge_keys",
    "split_key",
]

MERGE_RULE = "manual_merge"
SPLIT_RULE = "manual_split"


class MemberPublic(BaseModel):
    """A document node in a resolved entity, and why it is there."""

    knowledge_id: str
    name: str
    rule: str
    score: float | None
    reason: str
    justified_by: list[str] = Field(description="documents whose nodes the link rests on")
    manual: bool


class ResolvedEntityPublic(BaseModel):
    id: str
    name: str
    members: list[MemberPublic]


class KeptApartPublic(BaseModel):
    """A node of this key kept apart from a resolved entity of the same name (a homonym)."""

    knowledge_id: str
    name: str
    apart_from: str
    apart_from_name: str
    rule: str
    reason: str
    manual: bool


class ResolutionPublic(BaseModel):
    key: str
    nodes: int = Field(description="document nodes of this key (up to the audit's row cap)")
    entities: list[ResolvedEntityPublic]
    kept_apart: list[KeptApartPublic]


_Documents = Annotated[list[uuid.UUID], Bounded("resolution.max_split_documents")]
_Name = Annotated[InputText, Bounded("api.max_text_field_chars")]


class MergeRequest(RequestModel):
    """Merge the entities of another key into this key's resolved entity."""

    other: _Name = Field(description="the other entity's name (or name key)")


class SplitRequest(RequestModel):
    """Take this key's nodes (of some documents, or all) out of their resolved entity."""

    knowledge_ids: _Documents | None = Field(
        default=None, description="only these documents' nodes; all of the key's when absent"
    )


def _key_of(raw: str) -> str:
    key = name_key(raw)
    if not key:
        raise InvalidInputError("the entity name holds no letter or digit")
    return key


def _nodes(
    store: Neo4jResolutionStore,
    kb_id: uuid.UUID,
    key: str,
    s: ResolutionSettings,
    knowledge_ids: list[uuid.UUID] | None = None,
) -> list[KeyNode]:
    nodes = store.key_nodes(kb_id, key, knowledge_ids, s.max_audit_rows)
    if not nodes:
        raise EntityNotFoundError(f"no entity of key {key!r} in this knowledge base", key=key)
    return nodes


def audit_key(
    store: Neo4jResolutionStore, kb_id: uuid.UUID, raw_key: str, s: ResolutionSettings
) -> ResolutionPublic:
    """What the key's nodes are resolved to, with every member and the homonyms kept apart."""
    key = _key_of(raw_key)
    row = store.audit(kb_id, key, s.max_audit_rows)
    if not row["nodes"]:
        raise EntityNotFoundError(f"no entity of key {key!r} in this knowledge base", key=key)
    return ResolutionPublic(
        key=key,
        nodes=int(row["nodes"]),
        entities=[_entity(e) for e in row["entities"]],
        kept_apart=[
            KeptApartPublic(
                knowledge_id=str(a["kg"]),
                name=str(a["name"]),
                apart_from=str(a["from_id"]),
                apart_from_name=str(a["from_name"]),
                rule=str(a["rule"]),
                reason=str(a["reason"] or ""),
                manual=bool(a["manual"]),
            )
            for a in row["apart"]
        ],
    )


def _entity(row: dict[str, Any]) -> ResolvedEntityPublic:
    return ResolvedEntityPublic(
        id=str(row["id"]),
        name=str(row["name"]),
        members=[
            MemberPublic(
                knowledge_id=str(m["kg"]),
                name=str(m["name"]),
                rule=str(m["rule"]),
                score=None if m["score"] is None else float(m["score"]),
                reason=str(m["reason"] or ""),
                justified_by=[str(d) for d in m["documents"] or []],
                manual=bool(m["manual"]),
            )
            for m in row["members"]
        ],
    )


def merge_keys(
    store: Neo4jResolutionStore,
    kb_id: uuid.UUID,
    raw_key: str,
    body: MergeRequest,
    s: ResolutionSettings,
) -> ResolutionPublic:
    """Every node of both keys in one resolved entity (this key's, or a new one), pinned."""
    key, other = _key_of(raw_key), _key_of(body.other)
    mine = _nodes(store, kb_id, key, s)
    theirs = _nodes(store, kb_id, other, s) if other != key else []
    target = next((n.resolved for n in mine if n.resolved), None) or str(uuid.uuid4())
    reason = f"merged by an administrator with {other!r}"
    store.place(kb_id, [*mine, *theirs], target, mine[0].name, [], MERGE_RULE, reason)
    return audit_key(store, kb_id, key, s)


def split_key(
    store: Neo4jResolutionStore,
    kb_id: uuid.UUID,
    raw_key: str,
    body: SplitRequest,
    s: ResolutionSettings,
) -> ResolutionPublic:
    """The key's nodes (of the given documents) in a new resolved entity of their own, kept
    apart from the one they left, pinned."""
    key = _key_of(raw_key)
    nodes = _nodes(store, kb_id, key, s, body.knowledge_ids)
    left = sorted({n.resolved for n in nodes if n.resolved})
    reason = "split by an administrator"
    store.place(kb_id, nodes, str(uuid.uuid4()), nodes[0].name, left, SPLIT_RULE, reason)
    return audit_key(store, kb_id, key, s)
