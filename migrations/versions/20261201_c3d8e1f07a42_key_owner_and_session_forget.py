"""memory owner bound to an API key; a session's recall log goes with the session

Revision ID: c3d8e1f07a42
Revises: c3d9e1f4a7b2
Create Date: 2026-12-01 09:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "c3d8e1f07a42"
down_revision: str | None = "c3d9e1f4a7b2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_RECALL_SESSION_FK = "recall_memory_session_id_fkey"  # PostgreSQL's name for the unnamed key


def _recall_session_fk(ondelete: str) -> None:
    op.drop_constraint(_RECALL_SESSION_FK, "recall_memory", type_="foreignkey")
    op.create_foreign_key(
        _RECALL_SESSION_FK,
        "recall_memory",
        "chat_sessions",
        ["session_id"],
        ["id"],
        ondelete=ondelete,
    )


def upgrade() -> None:
    # NULL: a key made before owners were bound acts for the default owner (admin: any owner).
    op.add_column("api_keys", sa.Column("owner", sa.String(length=200), nullable=True))
    # Rows of sessions deleted earlier (their session id was set to NULL) cannot be told apart
    # from session-less rows any more; only future deletes take the log with them.
    _recall_session_fk("CASCADE")


def downgrade() -> None:
    _recall_session_fk("SET NULL")
    op.drop_column("api_keys", "owner")
