"""a document may carry its own extraction settings over its base's

Revision ID: c3f9a1d5e7b2
Revises: b8d4f1e6a2c9
Create Date: 2026-12-07 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "c3f9a1d5e7b2"
down_revision: str | None = "b8d4f1e6a2c9"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # NULL for every existing document: its base's settings alone, as before.
    op.add_column(
        "knowledge",
        sa.Column("extract_override", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
    )


def downgrade() -> None:
    op.drop_column("knowledge", "extract_override")
