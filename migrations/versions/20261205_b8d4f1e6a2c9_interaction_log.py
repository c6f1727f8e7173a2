"""finished chat turns kept as ChatML records for fine-tuning (when chat.interaction_log is on)

Revision ID: b8d4f1e6a2c9
Revises: a3c7e2d9f1b4
Create Date: 2026-12-05 11:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "b8d4f1e6a2c9"
down_revision: str | None = "a3c7e2d9f1b4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "interactions",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("tenant_id", sa.UUID(), nullable=False),
        sa.Column("session_id", sa.UUID(), nullable=False),
        sa.Column("owner", sa.String(length=200), nullable=False),
        sa.Column("kb_ids", postgresql.ARRAY(sa.UUID()), nullable=False),
        sa.Column("record", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenants.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["session_id"], ["chat_sessions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_interactions_tenant_owner", "interactions", ["tenant_id", "owner"])
    op.create_index(
        "ix_interactions_kb_ids", "interactions", ["kb_ids"], postgresql_using="gin"
    )
    op.create_index("ix_interactions_session_id", "interactions", ["session_id"])


def downgrade() -> None:
    op.drop_table("interactions")
