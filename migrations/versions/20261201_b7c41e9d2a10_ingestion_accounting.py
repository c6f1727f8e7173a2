"""ingestion accounting: LLM calls, tokens, retries and graph seconds per document

Revision ID: b7c41e9d2a10
Revises: f6b5503cc532
Create Date: 2026-12-01 06:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = 'b7c41e9d2a10'
down_revision: str | None = 'f6b5503cc532'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = (
    ('llm_calls', sa.Integer(), '0'),
    ('llm_prompt_tokens', sa.BigInteger(), '0'),
    ('llm_completion_tokens', sa.BigInteger(), '0'),
    ('llm_seconds', sa.Float(), '0'),
    ('graph_retries', sa.Integer(), '0'),
    ('graph_seconds', sa.Float(), '0'),
)


def upgrade() -> None:
    for name, type_, default in _COLUMNS:
        op.add_column(
            'knowledge',
            sa.Column(name, type_, server_default=sa.text(default), nullable=False),
        )


def downgrade() -> None:
    for name, _, _ in reversed(_COLUMNS):
        op.drop_column('knowledge', name)
