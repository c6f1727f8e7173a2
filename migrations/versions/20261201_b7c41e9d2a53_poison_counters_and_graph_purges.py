"""poison counters on documents and the pending graph purges

Revision ID: b7c41e9d2a53
Revises: aa62189ef5d1
Create Date: 2026-12-01 05:50:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b7c41e9d2a53"
down_revision: str | None = "aa62189ef5d1"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "knowledge", sa.Column("deliveries", sa.Integer(), server_default="0", nullable=False)
    )
    op.add_column(
        "knowledge", sa.Column("requeues", sa.Integer(), server_default="0", nullable=False)
    )
    op.create_table(
        "graph_purges",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("kb_id", sa.UUID(), nullable=False),
        sa.Column("knowledge_id", sa.UUID(), nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("graph_purges")
    op.drop_column("knowledge", "requeues")
    op.drop_column("knowledge", "deliveries")
