"""chunks and documents count the extracted entities and relations the cleanup left out

Revision ID: a7c4e9d2b1f0
Revises: 4b8e0c2d9f17
Create Date: 2026-12-06 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "a7c4e9d2b1f0"
down_revision: str | None = "4b8e0c2d9f17"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Documents extracted before this revision show no drops until they are extracted again.
    for table in ("chunks", "knowledge"):
        op.add_column(
            table,
            sa.Column(
                "graph_drops",
                postgresql.JSONB(astext_type=sa.Text()),
                nullable=False,
                server_default="{}",
            ),
        )


def downgrade() -> None:
    for table in ("knowledge", "chunks"):
        op.drop_column(table, "graph_drops")
