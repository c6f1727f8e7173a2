"""chunks keep the name keys of the entities their graph extraction read

Revision ID: d4e2f1a9b3c5
Revises: c3d8e1f07a42
Create Date: 2026-12-01 20:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "d4e2f1a9b3c5"
down_revision: str | None = "c3d8e1f07a42"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Chunks extracted before this revision have none: the graph ranking then simply does not
    # step from them as passage seeds until their document is extracted again.
    op.add_column(
        "chunks",
        sa.Column(
            "entity_keys",
            postgresql.ARRAY(sa.Text()),
            nullable=False,
            server_default="{}",
        ),
    )


def downgrade() -> None:
    op.drop_column("chunks", "entity_keys")
