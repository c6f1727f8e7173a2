"""chunk pages leave room for a settlement that carries the extraction's trace

Revision ID: f1d3b5a7c9e2
Revises: e5a2b7c9d1f3
Create Date: 2026-12-08 09:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "f1d3b5a7c9e2"
down_revision: str | None = "e5a2b7c9d1f3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A chunk's settlement has written its trace, its entity keys and its drop counts since the page
# room was last sized (e5f3a2b1c4d6): the new version is some hundreds of bytes longer than the
# row it replaces (whose vector is stored apart), and at 60 only 55 % of the settlements of
# bench/ingest_e2e.py still found room in their page. The others wrote the row elsewhere and
# gave every index of the table a second entry, the chunk's HNSW graph among them (about 1.5 ms
# of PostgreSQL CPU each, and a dead node in the graph until vacuum). At 40 all of them stay in
# place, in no more pages than before (the moved versions took pages of their own). A page of
# short chunks whose old versions another transaction still sees can overflow: 2 of 24
# settlements of chunks of 128-512 characters moved at 40 with one such transaction open, 9 at
# 60. Only pages written from now on keep the room.
_CHUNKS_FILLFACTOR = 40
_PREVIOUS = 60


def upgrade() -> None:
    op.execute(f"ALTER TABLE chunks SET (fillfactor = {_CHUNKS_FILLFACTOR})")


def downgrade() -> None:
    op.execute(f"ALTER TABLE chunks SET (fillfactor = {_PREVIOUS})")
