"""index every foreign-key column a delete follows

Deleting a row makes PostgreSQL look up its referencing rows through each foreign key (to
cascade or to refuse); without an index on the referencing column every deleted row scans that
table. `chunks.parent_chunk_id` (ON DELETE CASCADE, no index) made a base of 26k chunks take
longer to delete than the statement timeout; `knowledge.tenant_id` and `api_keys.tenant_id` had
none either. The other foreign keys were covered already (as an index's leading column).

Revision ID: 4b8e0c2d9f17
Revises: 2808d3ec11ec
Create Date: 2026-12-06 09:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "4b8e0c2d9f17"
down_revision: str | None = "2808d3ec11ec"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Most chunks have no parent: the index holds only those that do, and the lookup of a
    # deleted chunk's children (an equality, so never on NULL) can still use it.
    op.create_index(
        "ix_chunks_parent_chunk_id",
        "chunks",
        ["parent_chunk_id"],
        postgresql_where="parent_chunk_id IS NOT NULL",
    )
    op.create_index("ix_knowledge_tenant_id", "knowledge", ["tenant_id"])
    op.create_index("ix_api_keys_tenant_id", "api_keys", ["tenant_id"])


def downgrade() -> None:
    op.drop_index("ix_api_keys_tenant_id", table_name="api_keys")
    op.drop_index("ix_knowledge_tenant_id", table_name="knowledge")
    op.drop_index("ix_chunks_parent_chunk_id", table_name="chunks")
