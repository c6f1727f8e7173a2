"""Outbox requests: the arguments a task receives, its lane, and the key that dedupes its work."""

from __future__ import annotations

import uuid

import pytest

from graphrag.db.enums import OutboxLane
from graphrag.db.outbox import (
    TaskName,
    close_memory_session,
    delete_document,
    delete_knowledge_base,
    extract_chunk,
    process_document,
    task_key,
)

pytestmark = pytest.mark.unit

DOC = uuid.UUID("00000000-0000-4000-8000-000000000001")
CHUNK = uuid.UUID("00000000-0000-4000-8000-000000000002")


def test_a_request_key_is_the_name_and_arguments_as_the_task_receives_them() -> None:
    request = extract_chunk(DOC, 3, CHUNK)
    assert request.args == (str(DOC), 3, str(CHUNK))
    # The worker computes the same key from the JSON arguments of the message it runs.
    assert request.dedup_key == task_key("graph.extract_chunk", [str(DOC), 3, str(CHUNK)])
    assert request.dedup_key == f'["graph.extract_chunk","{DOC}",3,"{CHUNK}"]'


def test_keys_keep_arguments_apart() -> None:
    # An owner holding the separator cannot make two different closes look like one.
    tenant, session = uuid.uuid4(), uuid.uuid4()
    assert close_memory_session(tenant, "a,b", session).dedup_key != task_key(
        "memory.close_session", [str(tenant), "a", "b", str(session)]
    )
    assert process_document(DOC, 1).dedup_key != process_document(DOC, 2).dedup_key


def test_each_task_has_its_lane_and_document() -> None:
    assert (process_document(DOC, 1).lane, process_document(DOC, 1).knowledge_id) == (
        OutboxLane.PARSE,
        DOC,
    )
    graph = extract_chunk(DOC, 1, CHUNK)
    assert (graph.lane, graph.knowledge_id, graph.chunk_id) == (OutboxLane.GRAPH, DOC, CHUNK)
    assert delete_document(DOC).lane == OutboxLane.DIRECT
    assert delete_knowledge_base(DOC).name is TaskName.DELETE_KNOWLEDGE_BASE


def test_task_names_are_the_registered_ones() -> None:
    from graphrag.settings import get_settings
    from workers.celery_app import create_celery

    app = create_celery(get_settings())
    app.loader.import_default_modules()
    assert set(TaskName) <= set(app.tasks)
