"""evaluation: question sets per base, runs and their per-question results

Revision ID: e5a2b7c9d1f3
Revises: c3f9a1d5e7b2
Create Date: 2026-12-07 10:00:00
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "e5a2b7c9d1f3"
down_revision: str | None = "c3f9a1d5e7b2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = postgresql.JSONB(astext_type=sa.Text())
_STATUSES = ("queued", "running", "succeeded", "failed", "cancelled")


def _uuid(name: str, *args: Any, **kwargs: Any) -> sa.Column[Any]:
    return sa.Column(name, postgresql.UUID(as_uuid=True), *args, **kwargs)


def upgrade() -> None:
    op.create_table(
        "eval_sets",
        _uuid("id", primary_key=True),
        _uuid("tenant_id", sa.ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False),
        _uuid("kb_id", sa.ForeignKey("knowledge_bases.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("question_count", sa.Integer, nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
    )
    op.create_index("ix_eval_sets_tenant_id", "eval_sets", ["tenant_id"])
    op.create_index("ix_eval_sets_kb_id", "eval_sets", ["kb_id"])
    op.create_table(
        "eval_questions",
        _uuid("id", primary_key=True),
        _uuid("set_id", sa.ForeignKey("eval_sets.id", ondelete="CASCADE"), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("answer", sa.Text),
        sa.Column("answer_aliases", _JSON, nullable=False),
        sa.Column("gold", _JSON, nullable=False),
        sa.Column("hops", sa.Integer),
        sa.Column("tags", _JSON, nullable=False),
        sa.UniqueConstraint("set_id", "seq", name="uq_eval_questions_set_seq"),
    )
    op.create_table(
        "eval_runs",
        _uuid("id", primary_key=True),
        _uuid("tenant_id", sa.ForeignKey("tenants.id", ondelete="CASCADE"), nullable=False),
        _uuid("kb_id", sa.ForeignKey("knowledge_bases.id", ondelete="CASCADE"), nullable=False),
        _uuid("set_id", sa.ForeignKey("eval_sets.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column(
            "status",
            sa.Enum(*_STATUSES, name="eval_run_status", native_enum=False, create_constraint=True, length=32),
            nullable=False,
        ),
        sa.Column("config", _JSON, nullable=False),
        sa.Column("done", sa.Integer, nullable=False),
        sa.Column("total", sa.Integer, nullable=False),
        sa.Column("metrics", _JSON),
        sa.Column("error", sa.Text),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("started_at", sa.DateTime(timezone=True)),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
    )
    for column in ("tenant_id", "kb_id", "set_id"):
        op.create_index(f"ix_eval_runs_{column}", "eval_runs", [column])
    op.create_table(
        "eval_results",
        _uuid(
            "run_id", sa.ForeignKey("eval_runs.id", ondelete="CASCADE"), primary_key=True
        ),
        _uuid(
            "question_id",
            sa.ForeignKey("eval_questions.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("ranked", _JSON, nullable=False),
        sa.Column("cited", _JSON, nullable=False),
        sa.Column("answer", sa.Text),
        sa.Column("latency_ms", sa.Float, nullable=False),
        sa.Column("llm_calls", sa.Integer, nullable=False),
        sa.Column("tokens", sa.Integer),
    )
    op.create_index("ix_eval_results_question_id", "eval_results", ["question_id"])


def downgrade() -> None:
    for table in ("eval_results", "eval_runs", "eval_questions", "eval_sets"):
        op.drop_table(table)
