"""chunks keep a trace of their graph extraction (counts and the first names read)

Revision ID: a3c7e2d9f1b4
Revises: a7c4e9d2b1f0
Create Date: 2026-12-05 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "a3c7e2d9f1b4"
down_revision: str | None = "a7c4e9d2b1f0"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Nullable without a default: adding the column rewrites no row.
    op.add_column("chunks", sa.Column("graph_trace", postgresql.JSONB(), nullable=True))


def downgrade() -> None:
    op.drop_column("chunks", "graph_trace")
