"""Export of the interaction log (finished chat turns as ChatML records) as JSON Lines."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from api.auth import PrincipalDep
from api.deps import SessionDep, SettingsDep, TenantDep
from graphrag.auth.models import Capability
from graphrag.chat.interaction_log import export_lines
from graphrag.kb.service import require_live_kb
from graphrag.text_input import InputText

router = APIRouter(prefix="/api/v1", tags=["interactions"])

_JSONL = "application/x-ndjson"
_OWNER_MAX_CHARS = 200  # the stored owner's width


@router.get(
    "/interactions",
    response_class=StreamingResponse,
    responses={200: {"content": {_JSONL: {"schema": {"type": "string"}}}}},
)
def export_interactions(
    tenant: TenantDep,
    caller: PrincipalDep,
    session: SessionDep,
    settings: SettingsDep,
    kb_id: uuid.UUID | None = None,
    owner: Annotated[InputText | None, Query(max_length=_OWNER_MAX_CHARS)] = None,
) -> StreamingResponse:
    """The logged turns (`chat.interaction_log`) of a base and/or a memory owner, one ChatML
    record `{"messages": [...]}` a line, oldest first (the newest
    `chat.interaction_export_max`). A key that is not `admin` reads only its own owner's turns;
    another tenant's base is 404."""
    if kb_id is not None:
        require_live_kb(session, tenant, kb_id)
    if owner is not None or not caller.can(Capability.ADMIN):
        owner = caller.memory_owner(owner, settings.memory.default_owner)
    limit = settings.chat.interaction_export_max
    # Read whole before answering: the request's database session ends with the route.
    lines = list(export_lines(session, tenant, kb_id=kb_id, owner=owner, limit=limit))
    return StreamingResponse(iter(lines), media_type=_JSONL)
