"""extract config: example nodes lose their unused `chunks` list

Revision ID: c3d9e1f4a7b2
Revises: b7c41e9d2a10
Create Date: 2026-12-01 10:00:00.000000

A graph node no longer carries the chunks it was read from (the store records the chunk it
writes for); the few-shot nodes stored in each base's extract config drop the empty key, so
they still validate. The downgrade puts an empty list back.
"""

from collections.abc import Sequence

from alembic import op

revision: str = 'c3d9e1f4a7b2'
down_revision: str | None = 'b7c41e9d2a10'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_STRIP = """
UPDATE knowledge_bases
SET extract_config = jsonb_set(
    extract_config,
    '{nodes}',
    (SELECT coalesce(jsonb_agg(node - 'chunks' ORDER BY i), '[]'::jsonb)
     FROM jsonb_array_elements(extract_config -> 'nodes') WITH ORDINALITY AS e(node, i))
)
WHERE jsonb_typeof(extract_config -> 'nodes') = 'array'
"""

_RESTORE = """
UPDATE knowledge_bases
SET extract_config = jsonb_set(
    extract_config,
    '{nodes}',
    (SELECT coalesce(jsonb_agg(node || '{"chunks": []}'::jsonb ORDER BY i), '[]'::jsonb)
     FROM jsonb_array_elements(extract_config -> 'nodes') WITH ORDINALITY AS e(node, i))
)
WHERE jsonb_typeof(extract_config -> 'nodes') = 'array'
"""


def upgrade() -> None:
    op.execute(_STRIP)


def downgrade() -> None:
    op.execute(_RESTORE)
