"""task outbox: background tasks written with the state change that needs them

Revision ID: f6b5503cc532
Revises: b7c41e9d2a53
Create Date: 2026-12-01 05:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = 'f6b5503cc532'
down_revision: str | None = 'b7c41e9d2a53'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('outbox',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('task_name', sa.String(length=100), nullable=False),
    sa.Column('args', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('dedup_key', sa.Text(), nullable=False),
    sa.Column('lane', sa.Enum('graph', 'parse', 'direct', name='outbox_lane', native_enum=False, create_constraint=True, length=32), nullable=False),
    sa.Column('status', sa.Enum('pending', 'sent', 'failed', name='outbox_status', native_enum=False, create_constraint=True, length=32), nullable=False),
    sa.Column('knowledge_id', sa.UUID(), nullable=True),
    sa.Column('chunk_id', sa.UUID(), nullable=True),
    sa.Column('broker_epoch', sa.String(length=64), nullable=True),
    sa.Column('sends', sa.Integer(), nullable=False),
    sa.Column('resends', sa.Integer(), nullable=False),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_outbox_knowledge', 'outbox', ['knowledge_id'], unique=False)
    op.create_index('ix_outbox_lane_status', 'outbox', ['lane', 'status', 'id'], unique=False)
    op.create_index('uq_outbox_live_key', 'outbox', ['dedup_key'], unique=True, postgresql_where=sa.text("status IN ('pending', 'sent')"))


def downgrade() -> None:
    op.drop_index('uq_outbox_live_key', table_name='outbox', postgresql_where=sa.text("status IN ('pending', 'sent')"))
    op.drop_index('ix_outbox_lane_status', table_name='outbox')
    op.drop_index('ix_outbox_knowledge', table_name='outbox')
    op.drop_table('outbox')
