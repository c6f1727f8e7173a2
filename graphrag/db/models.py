"""SQLAlchemy 2 table models. Alembic owns the schema; these mirror the migrations."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar, cast

from pgvector.sqlalchemy import Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    Computed,
    DateTime,
    Enum,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR, UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from graphrag.db.enums import (
    EvalRunStatus,
    GraphStatus,
    KnowledgeBaseStatus,
    KnowledgeSource,
    MessageRole,
    OutboxLane,
    OutboxStatus,
    ParseStatus,
)
from graphrag.settings import SCHEMA_EMBEDDING_DIM

__all__ = [
    "TEXT_SEARCH_CONFIG",
    "ApiKey",
    "Base",
    "ChatSession",
    "Chunk",
    "CoreMemory",
    "GraphPurge",
    "Knowledge",
    "KnowledgeBase",
    "Message",
    "OutboxTask",
    "RecallMemory",
    "Tenant",
    "core_table",
]

# The text-search configuration is part of the schema, fixed by the first migration, as is the
# vector width (`SCHEMA_EMBEDDING_DIM`, beside the embedding settings that must match it).
TEXT_SEARCH_CONFIG = "simple"


def _enum(enum_cls: type[StrEnum], name: str) -> Enum:
    return Enum(
        enum_cls,
        name=name,
        native_enum=False,
        create_constraint=True,
        length=32,
        values_callable=lambda members: [m.value for m in members],
    )


def _uuid_pk() -> Mapped[uuid.UUID]:
    return mapped_column(UUID(as_uuid=True), primary_key=True, default=uuid.uuid4)


def _tenant_fk() -> Mapped[uuid.UUID]:
    """The owning tenant, indexed (its rows are listed by tenant and go with it)."""
    return mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"), index=True)


def _kb_fk() -> Mapped[uuid.UUID]:
    """The owning knowledge base, indexed (its rows are listed by base and go with it)."""
    return mapped_column(ForeignKey("knowledge_bases.id", ondelete="CASCADE"), index=True)


def _created() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), server_default=func.now(), nullable=False)


def _updated() -> Mapped[datetime]:
    return mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now(), nullable=False
    )


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSONB, list[Any]: JSONB}


class Tenant(Base):
    __tablename__ = "tenants"

    id: Mapped[uuid.UUID] = _uuid_pk()
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[datetime] = _created()


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[uuid.UUID] = _uuid_pk()
    tenant_id: Mapped[uuid.UUID] = _tenant_fk()
    name: Mapped[str] = mapped_column(String(200))
    key_hash: Mapped[str] = mapped_column(String(128), unique=True)
    prefix: Mapped[str] = mapped_column(String(32))
    capabilities: Mapped[list[str]] = mapped_column(ARRAY(String(64)), default=list)
    # The one memory owner the key acts for (NULL: the default owner); `admin` keys act for any.
    owner: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = _created()
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class KnowledgeBase(Base):
    __tablename__ = "knowledge_bases"
    __table_args__ = (UniqueConstraint("tenant_id", "name", name="uq_knowledge_bases_tenant_name"),)

    id: Mapped[uuid.UUID] = _uuid_pk()
    tenant_id: Mapped[uuid.UUID] = _tenant_fk()
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[KnowledgeBaseStatus] = mapped_column(
        _enum(KnowledgeBaseStatus, "kb_status"), default=KnowledgeBaseStatus.ACTIVE
    )
    chunking: Mapped[dict[str, Any]] = mapped_column(default=dict)
    indexing: Mapped[dict[str, Any]] = mapped_column(default=dict)
    extract_config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    embedding_model: Mapped[str] = mapped_column(String(200))
    chat_model: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = _updated()


class Knowledge(Base):
    """One document of a knowledge base and the state of its processing."""

    # Pages keep room for the row's many in-place updates (fillfactor, set by a migration).
    __tablename__ = "knowledge"
    __table_args__ = (
        Index(
            "uq_knowledge_kb_sha256_live",
            "kb_id",
            "sha256",
            unique=True,
            postgresql_where=text("parse_status <> 'deleting'"),
        ),
        Index("ix_knowledge_kb_status", "kb_id", "parse_status"),
    )

    id: Mapped[uuid.UUID] = _uuid_pk()
    kb_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("knowledge_bases.id", ondelete="CASCADE"))
    tenant_id: Mapped[uuid.UUID] = _tenant_fk()
    source: Mapped[KnowledgeSource] = mapped_column(_enum(KnowledgeSource, "knowledge_source"))
    file_name: Mapped[str] = mapped_column(String(255))
    file_type: Mapped[str] = mapped_column(String(32))
    file_size: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    source_url: Mapped[str | None] = mapped_column(Text)
    storage_path: Mapped[str | None] = mapped_column(Text)
    parse_status: Mapped[ParseStatus] = mapped_column(
        _enum(ParseStatus, "parse_status"), default=ParseStatus.PENDING
    )
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    pending_subtasks_count: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text)
    progress: Mapped[dict[str, Any]] = mapped_column(default=dict)
    stats: Mapped[dict[str, Any]] = mapped_column(default=dict)
    page_count: Mapped[int] = mapped_column(Integer, default=0)
    chunk_count: Mapped[int] = mapped_column(Integer, default=0)
    entity_count: Mapped[int] = mapped_column(Integer, default=0)
    relation_count: Mapped[int] = mapped_column(Integer, default=0)
    failed_chunk_count: Mapped[int] = mapped_column(Integer, default=0)
    # Extracted entities and relations the cleanup left out, per reason (`entities.placeholder`,
    # `relations.unknown_end`...): the sum of the chunks' counts, taken when the graph completes.
    graph_drops: Mapped[dict[str, Any]] = mapped_column(default=dict, server_default="{}")
    # The document's own extraction settings over its base's (`extraction.overrides`); NULL:
    # the base's alone.
    extract_override: Mapped[dict[str, Any] | None] = mapped_column(JSONB, nullable=True)
    # Runs of document.process started for the current attempt, and reconciler re-enqueues of
    # the current attempt; both are reset by a re-parse.
    deliveries: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    requeues: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Runs started and never ended, over all attempts: a run that died with its worker is never
    # settled, so the count tells poison documents apart; a re-parse does not reset it.
    unsettled_runs: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # What the current attempt's graph stage cost: LLM calls and the tokens the server reported,
    # seconds waiting on the LLM, retried chunk tasks, and seconds of chunk-task work (summed).
    llm_calls: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    llm_prompt_tokens: Mapped[int] = mapped_column(BigInteger, default=0, server_default=text("0"))
    llm_completion_tokens: Mapped[int] = mapped_column(
        BigInteger, default=0, server_default=text("0")
    )
    llm_seconds: Mapped[float] = mapped_column(Float, default=0.0, server_default=text("0"))
    graph_retries: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    graph_seconds: Mapped[float] = mapped_column(Float, default=0.0, server_default=text("0"))
    status_changed_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now()
    )
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = _updated()


class GraphPurge(Base):
    """A graph removal owed to Neo4j while the graph was turned off: done once it is back.

    `knowledge_id` None means the whole base; `attempt` is the document's attempt when the
    removal was owed (a later attempt rebuilds, and removes, the graph itself).
    """

    __tablename__ = "graph_purges"

    id: Mapped[uuid.UUID] = _uuid_pk()
    kb_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True))
    knowledge_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    attempt: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = _created()


class Chunk(Base):
    # Pages keep room for the settlement's in-place update (fillfactor, set by a migration).
    __tablename__ = "chunks"
    __table_args__ = (
        UniqueConstraint("knowledge_id", "attempt", "seq", name="uq_chunks_knowledge_attempt_seq"),
        Index(
            "ix_chunks_embedding_hnsw",
            "embedding",
            postgresql_using="hnsw",
            postgresql_ops={"embedding": "vector_cosine_ops"},
        ),
        Index("ix_chunks_tsv", "tsv", postgresql_using="gin"),
        Index("ix_chunks_kb", "kb_id"),
        # Every foreign key a delete follows has an index on its column (a test checks it).
        Index(
            "ix_chunks_parent_chunk_id",
            "parent_chunk_id",
            postgresql_where=text("parent_chunk_id IS NOT NULL"),
        ),
    )

    id: Mapped[uuid.UUID] = _uuid_pk()
    kb_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("knowledge_bases.id", ondelete="CASCADE"))
    knowledge_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("knowledge.id", ondelete="CASCADE"), index=True
    )
    attempt: Mapped[int] = mapped_column(Integer)
    seq: Mapped[int] = mapped_column(Integer)
    chunk_type: Mapped[str] = mapped_column(String(32))
    parent_chunk_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("chunks.id", ondelete="CASCADE")
    )
    content: Mapped[str] = mapped_column(Text)
    page: Mapped[int | None] = mapped_column(Integer)
    start_offset: Mapped[int] = mapped_column(Integer, default=0)
    end_offset: Mapped[int] = mapped_column(Integer, default=0)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    embedding: Mapped[list[float] | None] = mapped_column(Vector(SCHEMA_EMBEDDING_DIM))
    tsv: Mapped[Any] = mapped_column(
        TSVECTOR, Computed(f"to_tsvector('{TEXT_SEARCH_CONFIG}', content)", persisted=True)
    )
    graph_status: Mapped[GraphStatus] = mapped_column(
        _enum(GraphStatus, "graph_status"), default=GraphStatus.PENDING
    )
    graph_error: Mapped[str | None] = mapped_column(Text)
    # Name keys of the entities its graph extraction read: where the graph ranking steps from
    # this chunk when it is one of a question's best passages (no scan of its document's nodes).
    entity_keys: Mapped[list[str]] = mapped_column(ARRAY(Text), default=list, server_default="{}")
    # What the cleanup left out of this chunk's extraction, per reason (see Knowledge.graph_drops).
    graph_drops: Mapped[dict[str, Any]] = mapped_column(default=dict, server_default="{}")
    # What its graph extraction read (counts, the first names and relations, how the reply
    # parsed): written by the settlement, readable with the chunk.
    graph_trace: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    created_at: Mapped[datetime] = _created()


class OutboxTask(Base):
    """A task the core wants run, written in the transaction that made it necessary.

    The relay sends `pending` rows to the broker by `task_name`; a task that settles deletes its
    row. `dedup_key` (task name and arguments) keeps one live row per piece of work.
    """

    __tablename__ = "outbox"
    __table_args__ = (
        Index(
            "uq_outbox_live_key",
            "dedup_key",
            unique=True,
            postgresql_where=text("status IN ('pending', 'sent')"),
        ),
        Index("ix_outbox_lane_status", "lane", "status", "id"),
        Index("ix_outbox_knowledge", "knowledge_id"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    task_name: Mapped[str] = mapped_column(String(100))
    args: Mapped[list[Any]] = mapped_column()
    dedup_key: Mapped[str] = mapped_column(Text)
    lane: Mapped[OutboxLane] = mapped_column(_enum(OutboxLane, "outbox_lane"))
    status: Mapped[OutboxStatus] = mapped_column(
        _enum(OutboxStatus, "outbox_status"), default=OutboxStatus.PENDING
    )
    knowledge_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    chunk_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    broker_epoch: Mapped[str | None] = mapped_column(String(64))  # the broker it was sent to
    sends: Mapped[int] = mapped_column(Integer, default=0)
    resends: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = _created()
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ChatSession(Base):
    __tablename__ = "chat_sessions"

    id: Mapped[uuid.UUID] = _uuid_pk()
    tenant_id: Mapped[uuid.UUID] = _tenant_fk()
    owner: Mapped[str] = mapped_column(String(200))
    title: Mapped[str] = mapped_column(String(300), default="")
    kb_ids: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = _updated()
    messages: Mapped[list[Message]] = relationship(
        back_populates="session", cascade="all, delete-orphan", order_by="Message.created_at"
    )


class Message(Base):
    __tablename__ = "messages"

    id: Mapped[uuid.UUID] = _uuid_pk()
    session_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("chat_sessions.id", ondelete="CASCADE"), index=True
    )
    role: Mapped[MessageRole] = mapped_column(_enum(MessageRole, "message_role"))
    content: Mapped[str] = mapped_column(Text, default="")
    references: Mapped[list[Any]] = mapped_column(default=list)
    steps: Mapped[list[Any]] = mapped_column(default=list)
    completed: Mapped[bool] = mapped_column(Boolean, default=False)
    # The statement's own clock, not the transaction's: a turn's question and answer are
    # inserted in one transaction, and `now()` would give both the same time, leaving their
    # order in the history to the ids.
    created_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True),
        default=func.clock_timestamp(),
        server_default=func.now(),
        nullable=False,
    )
    session: Mapped[ChatSession] = relationship(back_populates="messages")


class Interaction(Base):
    """A finished chat turn as a ChatML record (`{"messages": [...]}`: system, user, tool
    calls and results, assistant), kept for fine-tuning when `chat.interaction_log` is on.
    It goes with its session."""

    __tablename__ = "interactions"
    __table_args__ = (
        Index("ix_interactions_tenant_owner", "tenant_id", "owner"),
        Index("ix_interactions_kb_ids", "kb_ids", postgresql_using="gin"),
    )

    id: Mapped[uuid.UUID] = _uuid_pk()
    tenant_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    session_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("chat_sessions.id", ondelete="CASCADE"), index=True
    )
    owner: Mapped[str] = mapped_column(String(200))
    kb_ids: Mapped[list[uuid.UUID]] = mapped_column(ARRAY(UUID(as_uuid=True)))
    record: Mapped[dict[str, Any]] = mapped_column()
    created_at: Mapped[datetime] = _created()


class CoreMemory(Base):
    """Always-in-prompt memory of an owner: identity, rules, profile."""

    __tablename__ = "core_memory"
    __table_args__ = (
        UniqueConstraint("tenant_id", "owner", "section", name="uq_core_memory_owner_section"),
    )

    id: Mapped[uuid.UUID] = _uuid_pk()
    tenant_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    owner: Mapped[str] = mapped_column(String(200))
    section: Mapped[str] = mapped_column(String(100))
    text: Mapped[str] = mapped_column(Text, default="")
    updated_at: Mapped[datetime] = _updated()


class RecallMemory(Base):
    """The conversation log of an owner, one row per message, across sessions."""

    __tablename__ = "recall_memory"
    __table_args__ = (Index("ix_recall_memory_owner_time", "tenant_id", "owner", "created_at"),)

    id: Mapped[uuid.UUID] = _uuid_pk()
    tenant_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("tenants.id", ondelete="CASCADE"))
    owner: Mapped[str] = mapped_column(String(200))
    # Deleting a chat session deletes its log: the transcript must not outlive the session.
    session_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("chat_sessions.id", ondelete="CASCADE"), index=True
    )
    role: Mapped[MessageRole] = mapped_column(_enum(MessageRole, "recall_role"))
    content: Mapped[str] = mapped_column(Text, default="")
    tool_data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = _created()


class EvalSet(Base):
    """A base's evaluation questions, uploaded as one JSONL file."""

    __tablename__ = "eval_sets"

    id: Mapped[uuid.UUID] = _uuid_pk()
    tenant_id: Mapped[uuid.UUID] = _tenant_fk()
    kb_id: Mapped[uuid.UUID] = _kb_fk()
    name: Mapped[str] = mapped_column(String(200))
    question_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = _created()


class EvalQuestion(Base):
    """One question of a set: its gold documents (resolved to ids at upload) and answers."""

    __tablename__ = "eval_questions"
    __table_args__ = (UniqueConstraint("set_id", "seq", name="uq_eval_questions_set_seq"),)

    id: Mapped[uuid.UUID] = _uuid_pk()
    set_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("eval_sets.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)  # its line in the uploaded file
    question: Mapped[str] = mapped_column(Text)
    answer: Mapped[str | None] = mapped_column(Text)
    answer_aliases: Mapped[list[Any]] = mapped_column(default=list)
    gold: Mapped[list[Any]] = mapped_column(default=list)  # document ids, as text
    hops: Mapped[int | None] = mapped_column(Integer)
    tags: Mapped[list[Any]] = mapped_column(default=list)


class EvalRun(Base):
    """One scoring of a set with a configuration; its metrics once every question is scored."""

    __tablename__ = "eval_runs"

    id: Mapped[uuid.UUID] = _uuid_pk()
    tenant_id: Mapped[uuid.UUID] = _tenant_fk()
    kb_id: Mapped[uuid.UUID] = _kb_fk()
    set_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("eval_sets.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    status: Mapped[EvalRunStatus] = mapped_column(
        _enum(EvalRunStatus, "eval_run_status"), default=EvalRunStatus.QUEUED
    )
    config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    done: Mapped[int] = mapped_column(Integer, default=0)
    total: Mapped[int] = mapped_column(Integer)
    metrics: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = _created()
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class EvalResult(Base):
    """What one run found for one question; one row each, so a resumed run counts it once."""

    __tablename__ = "eval_results"

    run_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("eval_runs.id", ondelete="CASCADE"), primary_key=True
    )
    question_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("eval_questions.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    ranked: Mapped[list[Any]] = mapped_column(default=list)  # document ids, best first
    cited: Mapped[list[Any]] = mapped_column(default=list)  # documents the answer cited
    answer: Mapped[str | None] = mapped_column(Text)
    latency_ms: Mapped[float] = mapped_column(Float)
    llm_calls: Mapped[int] = mapped_column(Integer, default=0)
    tokens: Mapped[int | None] = mapped_column(Integer)


def core_table(model: type[Base]) -> Table:
    """The table behind a model, for statements built once and run without the ORM's per-call
    work (the hot paths of the workers)."""
    return cast("Table", model.__table__)
