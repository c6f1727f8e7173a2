"""Entity resolution of a base, per name key: what was merged and why, and an admin's fixes."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Path

from api.deps import AppStateDep, SessionDep, TenantDep
from graphrag.graph.resolution.admin import (
    MergeRequest,
    ResolutionPublic,
    SplitRequest,
    audit_key,
    merge_keys,
    split_key,
)
from graphrag.graph.resolution.store import Neo4jResolutionStore
from graphrag.kb.entity_resolution import resolution_of
from graphrag.settings import ResolutionSettings

router = APIRouter(prefix="/api/v1/knowledge-bases", tags=["entity resolution"])

_KEY = "/{kb_id}/entities/{key}"
EntityKey = Annotated[str, Path(max_length=500, description="an entity name or its name key")]


class _Resolution:
    """The caller's base (read to GET, write to change) and the resolution settings; the base
    is looked up by `store()`, in the route, after the body is validated."""

    def __init__(
        self, kb_id: uuid.UUID, session: SessionDep, state: AppStateDep, tenant: TenantDep
    ) -> None:
        self.kb_id = kb_id
        self.settings: ResolutionSettings = state.settings.resolution
        self._session, self._state, self._tenant = session, state, tenant

    def store(self) -> Neo4jResolutionStore:
        """The base's resolution store (404 for another tenant's base, 503 without a graph)."""
        found = self._state.services.resolution
        return resolution_of(self._session, found, self._tenant, self.kb_id)


ResolutionDep = Annotated[_Resolution, Depends()]


@router.get(_KEY + "/resolution")
def entity_resolution(r: ResolutionDep, key: EntityKey) -> ResolutionPublic:
    """The resolved entities this key's document nodes belong to, each member with the rule,
    score, reason and documents behind its link, and the homonyms kept apart with the reason."""
    return audit_key(r.store(), r.kb_id, key, r.settings)


@router.post(_KEY + "/merge")
def merge_entity(r: ResolutionDep, key: EntityKey, body: MergeRequest) -> ResolutionPublic:
    """Put every document node of `other` in this key's resolved entity. Fixed: later automatic
    runs and re-parses keep it."""
    return merge_keys(r.store(), r.kb_id, key, body, r.settings)


@router.post(_KEY + "/split")
def split_entity(r: ResolutionDep, key: EntityKey, body: SplitRequest) -> ResolutionPublic:
    """Take this key's nodes (of `knowledge_ids`, or all) out of their resolved entity into one
    of their own, kept apart from it. Fixed: later automatic runs and re-parses keep it."""
    return split_key(r.store(), r.kb_id, key, body, r.settings)
