"""The demo's path on the default local model (Qwen2.5-Coder 1.5B through a real llama.cpp
server): the sample documents go through a real worker into a graph with relations and no
placeholder entity, and the demo question is answered with both of its hops and references."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from cli.services import command_services
from graphrag.chat.schemas import ChatRequest, DeltaEvent, ErrorEvent, SessionCreate
from graphrag.chat.service import run_chat, start_turn
from graphrag.chat.sessions import SessionAccess, create_session
from graphrag.db.engine import session_scope
from graphrag.db.enums import KnowledgeSource, ParseStatus
from graphrag.extraction.models import ExtractConfig
from graphrag.graph.factory import build_graph_store
from graphrag.graph.labels import entity_label
from graphrag.ingest.documents import NewDocument, add_document
from graphrag.kb.schemas import IndexingStrategy, KnowledgeBaseCreate
from graphrag.kb.service import create_kb
from graphrag.settings import Settings
from graphrag.tenancy import ensure_tenant
from tests.support.graph_helpers import remove_label
from tests.support.isolated_worker import (
    core_context,
    finished,
    on_redis_db,
    own_database,
    wait_document,
)
from tests.support.llama import DEMO_MODEL_NAME, llama_server
from tests.support.services import ROOT, data_dir
from tests.support.worker import WorkerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.llama]

SAMPLES = ROOT / "deploy" / "local" / "samples"
DEMO_REDIS_DB = 3  # outside the range the session fixtures pick from (test_graph_llama uses 2)
# As deploy/local/demo.sh: bounded replies, one call at a time (llama-cpp-python queues the
# rest), a call timeout that fits the 1.5B model on 2 busy cores.
LLM_ENV = {"LLM_MAX_TOKENS": "768", "LLM_CONCURRENCY_LIMIT": "1", "LLM_TIMEOUT_S": "600"}
WAIT_S = 1800.0
PLACEHOLDER_NAMES = ("<entity>", "entity", "name", "")


@pytest.fixture(scope="module")
def demo_llama_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama.cpp server on the default 1.5B model, for this module."""
    with llama_server(tmp_path_factory.mktemp("llama-demo"), DEMO_MODEL_NAME) as url:
        yield url


@pytest.mark.timeout(3600)
def test_demo_on_the_default_model(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    demo_llama_url: str,
    neo4j_driver: Driver,
) -> None:
    env = {**settings_env, **LLM_ENV, "LLM_BASE_URL": demo_llama_url, "LLM_MODEL": DEMO_MODEL_NAME}
    moved, env = on_redis_db(settings, env, DEMO_REDIS_DB)
    with own_database(services_env["DATABASE_URL"], moved, env) as (own, env, sessions):
        llm = own.llm.model_copy(
            update={
                "base_url": demo_llama_url,
                "model": DEMO_MODEL_NAME,
                "max_tokens": int(LLM_ENV["LLM_MAX_TOKENS"]),
                "concurrency_limit": 1,
                "timeout_s": float(LLM_ENV["LLM_TIMEOUT_S"]),
            }
        )
        chat = own.chat.model_copy(update={"decompose": True})
        own = own.model_copy(update={"llm": llm, "chat": chat})
        _demo(own, env, sessions, neo4j_driver)


def _demo(
    settings: Settings, env: dict[str, str], sessions: sessionmaker[Session], driver: Driver
) -> None:
    from workers.celery_app import create_celery

    celery = create_celery(settings)
    celery.control.purge()
    ctx = core_context(settings, sessions, build_graph_store(settings, driver))
    create = KnowledgeBaseCreate(
        name=f"samples-{uuid.uuid4().hex[:8]}",
        indexing=IndexingStrategy(graph_enabled=True),
        extract_config=ExtractConfig(enabled=True),
    )
    with session_scope(sessions) as session:
        tenant = ensure_tenant(session, settings.api.default_tenant)
        kb_id = create_kb(session, settings, ctx.graph, tenant, create).id
        doc_ids = [
            add_document(session, settings, ctx.storage, tenant, kb_id, _new(path)).id
            for path in sorted(SAMPLES.iterdir())
        ]
    worker = WorkerProcess(env, data_dir() / "test-logs" / "worker-demo.log", concurrency=1)
    worker.start(celery)
    try:
        docs = [wait_document(ctx, d, finished, timeout_s=WAIT_S) for d in doc_ids]
    finally:
        worker.stop()
    assert all(d.parse_status == ParseStatus.COMPLETED for d in docs), [d.error for d in docs]
    assert sum(d.relation_count for d in docs) > 0
    records, _, _ = driver.execute_query(f"MATCH (n:{entity_label(kb_id)}) RETURN n.name AS name")
    names = [r["name"] for r in records]
    assert names and not any(n.strip().casefold() in PLACEHOLDER_NAMES for n in names), names

    answer, references = _ask(settings, tenant, kb_id)
    assert "harbor logistics" in answer.casefold(), answer
    assert "ada moreau" in answer.casefold(), answer
    assert references, answer
    remove_label(driver, str(kb_id))


def _new(path: Path) -> NewDocument:
    return NewDocument(
        data=path.read_bytes(), file_name=path.name, media_type=None, source=KnowledgeSource.FILE
    )


def _ask(settings: Settings, tenant: uuid.UUID, kb_id: uuid.UUID) -> tuple[str, list[str]]:
    """The demo question, as `graphrag demo` asks it: the answer and the cited files."""
    with command_services(settings) as opened:
        services = opened.chat()
        with session_scope(services.sessions) as session:
            chat = create_session(
                session, tenant, "demo-test", SessionCreate(kb_ids=[kb_id]), settings.chat
            )
        access = SessionAccess.bound_to(tenant, "demo-test", settings.memory.default_owner)
        turn = start_turn(services, access, chat.id, ChatRequest(query=settings.cli.demo_question))
        parts: list[str] = []
        for event in run_chat(services, turn):
            assert not isinstance(event.data, ErrorEvent), event.data
            if isinstance(event.data, DeltaEvent):
                parts.append(event.data.content)
    assert turn.completed
    return "".join(parts), [ref.file_name for ref in turn.references]
