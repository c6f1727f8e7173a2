"""Core memory: short always-present texts of an owner (identity, rules, user profile...).

One row per (tenant, owner, section) in PostgreSQL `core_memory`. The configured sections
come first when rendered, in their configured order, then any other section alphabetically.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from pathlib import Path

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from graphrag.db.models import CoreMemory
from graphrag.errors import InvalidInputError, NotFoundError
from graphrag.llm.prompts import load_prompt
from graphrag.memory.records import MemoryOwner
from graphrag.memory.text_checks import check_storable
from graphrag.settings import MemorySettings
from graphrag.value_model import ValueModel

__all__ = [
    "MEMORY_BLOCK_PROMPT",
    "CoreMemoryView",
    "CoreSection",
    "delete_section",
    "read_core",
    "render_core_block",
    "write_section",
]

MEMORY_BLOCK_PROMPT = "memory_block"
_SECTION = re.compile(r"[a-z][a-z0-9_]*")


class CoreSection(ValueModel):
    section: str
    text: str
    updated_at: datetime


class CoreMemoryView(ValueModel):
    """The owner's core memory, sections in rendering order."""

    owner: str
    sections: list[CoreSection]


def _check_section(section: str, settings: MemorySettings) -> None:
    if not _SECTION.fullmatch(section) or len(section) > settings.core_section_max_chars:
        raise InvalidInputError(
            "a core memory section is a lower-case identifier "
            f"(letters, digits, _) of at most {settings.core_section_max_chars} characters",
            section=section,
        )


def read_core(db: Session, owner: MemoryOwner, settings: MemorySettings) -> CoreMemoryView:
    """Every section of the owner, configured ones first."""
    rows = db.scalars(
        select(CoreMemory).where(
            CoreMemory.tenant_id == owner.tenant_id, CoreMemory.owner == owner.owner
        )
    ).all()
    order = {name: i for i, name in enumerate(settings.core_sections)}
    rows = sorted(rows, key=lambda r: (order.get(r.section, len(order)), r.section))
    return CoreMemoryView(
        owner=owner.owner,
        sections=[
            CoreSection(section=r.section, text=r.text, updated_at=r.updated_at) for r in rows
        ],
    )


def write_section(
    db: Session, owner: MemoryOwner, section: str, text: str, settings: MemorySettings
) -> CoreSection:
    """Create or replace one section's text."""
    _check_section(section, settings)
    if len(check_storable(text, "core memory text")) > settings.core_text_max_chars:
        raise InvalidInputError(
            f"core memory text is limited to {settings.core_text_max_chars} characters"
        )
    row = db.execute(
        insert(CoreMemory)
        .values(
            id=uuid.uuid4(),
            tenant_id=owner.tenant_id,
            owner=owner.owner,
            section=section,
            text=text,
        )
        .on_conflict_do_update(
            constraint="uq_core_memory_owner_section",
            set_={"text": text, "updated_at": func.now()},
        )
        .returning(CoreMemory.section, CoreMemory.text, CoreMemory.updated_at)
    ).one()
    return CoreSection(section=row.section, text=row.text, updated_at=row.updated_at)


def delete_section(db: Session, owner: MemoryOwner, section: str) -> None:
    """Remove one section; NotFoundError when the owner has none of that name."""
    result = db.execute(
        delete(CoreMemory)
        .where(
            CoreMemory.tenant_id == owner.tenant_id,
            CoreMemory.owner == owner.owner,
            CoreMemory.section == check_storable(section, "section"),
        )
        .returning(CoreMemory.id)
    ).all()
    if not result:
        raise NotFoundError("no such core memory section", section=section)


def render_core_block(view: CoreMemoryView, templates: Path | None = None) -> str:
    """The core memory as a system-prompt block (empty when the owner has none)."""
    prompt = load_prompt(MEMORY_BLOCK_PROMPT, templates)
    parts = [
        prompt.render_fragment("core_section", section=s.section, text=s.text.strip()).strip()
        for s in view.sections
        if s.text.strip()
    ]
    if not parts:
        return ""
    return (prompt.render(sections="\n\n".join(parts)).system or "").strip()
