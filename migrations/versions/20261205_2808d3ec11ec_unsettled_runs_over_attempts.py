"""documents count their unsettled runs over all attempts (the poison budget survives a re-parse)

Revision ID: 2808d3ec11ec
Revises: e5f3a2b1c4d6
Create Date: 2026-12-05 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "2808d3ec11ec"
down_revision: str | None = "e5f3a2b1c4d6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "knowledge", sa.Column("unsettled_runs", sa.Integer(), server_default="0", nullable=False)
    )
    # From the per-attempt count: an attempt still to be claimed has settled none of its runs,
    # nor has one failed as poisoned (its reason, as the code before this revision wrote it);
    # any other had its last run settle (its write or its failure), the ones before it died.
    op.execute(
        "UPDATE knowledge SET unsettled_runs = CASE"
        " WHEN parse_status IN ('pending', 'processing') THEN deliveries"
        " WHEN parse_status = 'failed' AND error LIKE 'processing stopped %' THEN deliveries"
        " ELSE greatest(deliveries - 1, 0) END"
    )


def downgrade() -> None:
    op.drop_column("knowledge", "unsettled_runs")
