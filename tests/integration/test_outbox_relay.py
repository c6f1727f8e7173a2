"""The outbox and its relay against real PostgreSQL: rows commit with their state change, the
relay sends them in order, gates the graph lane fairly, survives a refusing broker, re-sends what
was lost and gives up after the cap. The broker side is a recording fake of the TaskQueue port.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from datetime import timedelta

import pytest
from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session, sessionmaker

from graphrag.db.engine import session_scope
from graphrag.db.enums import (
    EvalRunStatus,
    GraphStatus,
    OutboxStatus,
    ParseStatus,
)
from graphrag.db.lifecycle import finish_chunk_subtask
from graphrag.db.models import (
    EvalRun,
    EvalSet,
    Knowledge,
    KnowledgeBase,
    OutboxTask,
)
from graphrag.db.outbox import (
    TaskLease,
    delete_knowledge_base,
    enqueue,
    extract_chunk,
    outbox_backlog,
    process_document,
    record_failure,
    record_start,
    resolve_entities,
    run_evaluation,
    settle,
)
from graphrag.errors import BrokerUnavailableError
from graphrag.outbox.relay import relay_once
from graphrag.settings import OutboxSettings, Settings
from tests.support.document_rows import finalizing_document, pending_document
from tests.support.isolated_worker import own_database

pytestmark = pytest.mark.integration


class RecordingQueue:
    """Keeps what was sent; refuses everything while `down`, messages while `refusing`;
    `epoch` names what it holds now."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, list[object]]] = []
        self.down = False
        self.refusing = False
        self.epoch = "first"

    def broker_epoch(self) -> str:
        if self.down:
            raise BrokerUnavailableError("broker down")
        return self.epoch

    def send_batch(self, tasks: Sequence[tuple[str, Sequence[object]]]) -> None:
        if self.down or self.refusing:
            raise BrokerUnavailableError("refused")
        self.sent += [(task_name, list(args)) for task_name, args in tasks]


@pytest.fixture(scope="module")
def own_sessions(
    settings: Settings, settings_env: dict[str, str], services_env: dict[str, str]
) -> Iterator[sessionmaker[Session]]:
    """A database no other relay of this test session reads."""
    with own_database(services_env["DATABASE_URL"], settings, settings_env) as (_, _, sessions):
        yield sessions


@pytest.fixture()
def sessions(own_sessions: sessionmaker[Session]) -> sessionmaker[Session]:
    with session_scope(own_sessions) as session:
        session.execute(delete(OutboxTask))
    return own_sessions


def _settings(settings: Settings, **changes: object) -> OutboxSettings:
    return settings.outbox.model_copy(update=changes)


def _rows(sessions: sessionmaker[Session]) -> list[OutboxTask]:
    with session_scope(sessions) as session:
        return list(session.execute(select(OutboxTask).order_by(OutboxTask.id)).scalars())


def test_a_row_commits_or_rolls_back_with_its_transaction(sessions: sessionmaker[Session]) -> None:
    doc = uuid.uuid4()
    with pytest.raises(RuntimeError), session_scope(sessions) as session:
        enqueue(session, process_document(doc, 1))
        raise RuntimeError("the state change failed")
    assert _rows(sessions) == []
    with session_scope(sessions) as session:
        enqueue(session, process_document(doc, 1))
        enqueue(session, process_document(doc, 1))  # the same work twice is one row
    (row,) = _rows(sessions)
    assert (row.task_name, row.args, row.status) == ("document.process", [str(doc), 1], "pending")


def test_relay_sends_and_a_settled_task_removes_its_row(
    sessions: sessionmaker[Session], settings: Settings
) -> None:
    doc, kb = uuid.uuid4(), uuid.uuid4()
    with session_scope(sessions) as session:
        enqueue(session, process_document(doc, 2), delete_knowledge_base(kb))
    queue = RecordingQueue()
    report = relay_once(sessions, queue, settings.outbox)
    assert report.sent == 2
    assert sorted(queue.sent) == [
        ("document.delete_kb", [str(kb)]),
        ("document.process", [str(doc), 2]),
    ]
    assert {r.status for r in _rows(sessions)} == {OutboxStatus.SENT}
    assert relay_once(sessions, queue, settings.outbox).sent == 0  # in flight: not sent again
    with session_scope(sessions) as session:
        record_start(session, "document.process", [str(doc), 2])
        assert settle(session, "document.process", [str(doc), 2])
        assert not settle(session, "document.process", [str(doc), 2])
        assert outbox_backlog(session).model_dump() == {"unsent": 0, "in_flight": 1, "failed": 0}


def test_graph_rows_are_picked_round_robin_within_the_in_flight_cap(
    sessions: sessionmaker[Session], settings: Settings
) -> None:
    big, small = uuid.uuid4(), uuid.uuid4()
    with session_scope(sessions) as session:
        enqueue(session, *(extract_chunk(big, 1, uuid.uuid4()) for _ in range(50)))
        enqueue(session, *(extract_chunk(small, 1, uuid.uuid4()) for _ in range(2)))
    queue = RecordingQueue()
    outbox = _settings(settings, graph_in_flight=4)
    assert relay_once(sessions, queue, outbox).sent == 4
    docs = [args[0] for _, args in queue.sent]
    assert docs == [str(big), str(small), str(big), str(small)]
    assert relay_once(sessions, queue, outbox).sent == 0  # the cap is reached
    _, (doc, attempt, chunk) = queue.sent[1]
    with session_scope(sessions) as session:
        settle(session, "graph.extract_chunk", [doc, attempt, chunk])
    assert relay_once(sessions, queue, outbox).sent == 1  # one slot freed, one row sent


def test_a_pass_sends_direct_rows_then_parse_and_graph_rows_within_their_caps(
    sessions: sessionmaker[Session], settings: Settings
) -> None:
    docs, kb = [uuid.uuid4() for _ in range(3)], uuid.uuid4()
    with session_scope(sessions) as session:
        enqueue(session, *(extract_chunk(docs[0], 1, uuid.uuid4()) for _ in range(2)))
        enqueue(session, *(process_document(doc, 1) for doc in docs))
        enqueue(session, delete_knowledge_base(kb))
    queue = RecordingQueue()
    outbox = _settings(settings, parse_in_flight=2, graph_in_flight=1)
    assert relay_once(sessions, queue, outbox).sent == 4
    assert queue.sent[:3] == [
        ("document.delete_kb", [str(kb)]),
        ("document.process", [str(docs[0]), 1]),
        ("document.process", [str(docs[1]), 1]),
    ]
    assert queue.sent[3][0] == "graph.extract_chunk"
    assert relay_once(sessions, queue, outbox).sent == 0  # both gated lanes are full
    with session_scope(sessions) as session:
        settle(session, "document.process", [str(docs[0]), 1])
    assert relay_once(sessions, queue, outbox).sent == 1
    assert queue.sent[-1] == ("document.process", [str(docs[2]), 1])


def test_a_refusing_broker_leaves_rows_due(
    sessions: sessionmaker[Session], settings: Settings
) -> None:
    with session_scope(sessions) as session:
        enqueue(session, process_document(uuid.uuid4(), 1), process_document(uuid.uuid4(), 1))
    queue = RecordingQueue()
    queue.down = True
    report = relay_once(sessions, queue, settings.outbox)
    assert report.sent == 0 and report.broker_error == "broker down"
    queue.down, queue.refusing = False, True  # it answers, then refuses the messages
    assert relay_once(sessions, queue, settings.outbox).broker_error == "refused"
    assert {r.status for r in _rows(sessions)} == {OutboxStatus.PENDING}
    queue.refusing = False
    assert relay_once(sessions, queue, settings.outbox).sent == 2


def test_rows_sent_to_a_broker_that_lost_its_messages_go_again_at_once(
    sessions: sessionmaker[Session], settings: Settings
) -> None:
    waiting, running = uuid.uuid4(), uuid.uuid4()
    with session_scope(sessions) as session:
        enqueue(session, process_document(waiting, 1), process_document(running, 1))
    queue = RecordingQueue()
    assert relay_once(sessions, queue, settings.outbox).sent == 2
    with session_scope(sessions) as session:
        record_start(session, "document.process", [str(running), 1])
    assert relay_once(sessions, queue, settings.outbox).sent == 0
    queue.epoch = "restarted empty"
    report = relay_once(sessions, queue, settings.outbox)
    # The queued one is sent again at once; the running one lives on in its worker.
    assert (report.rearmed, report.sent) == (1, 1)
    assert queue.sent[-1] == ("document.process", [str(waiting), 1])
    assert [r.resends for r in _rows(sessions)] == [0, 0]


def test_the_resolution_rows_of_one_base_share_one_message_a_pass(
    sessions: sessionmaker[Session], settings: Settings
) -> None:
    first = pending_document(sessions)
    second, other = pending_document(sessions, sibling_of=first), pending_document(sessions)
    with session_scope(sessions) as session:
        enqueue(session, *(resolve_entities(doc) for doc in (first, second, other)))
    queue = RecordingQueue()
    assert relay_once(sessions, queue, settings.outbox).sent == 3
    # The run the first message starts takes the second document's row too (a live row).
    assert queue.sent == [
        ("graph.resolve_entities", [str(first)]),
        ("graph.resolve_entities", [str(other)]),
    ]
    assert [r.status for r in _rows(sessions)] == [OutboxStatus.SENT] * 3
    with session_scope(sessions) as session:
        enqueue(session, resolve_entities(second), rearm=True)
    assert relay_once(sessions, queue, settings.outbox).sent == 1  # due again: its own message
    assert queue.sent[-1] == ("graph.resolve_entities", [str(second)])


def _age_sent_rows(sessions: sessionmaker[Session], seconds: int) -> None:
    """Move every sent row's lease back in time, as if its task had been silent that long."""
    back = timedelta(seconds=seconds)
    with session_scope(sessions) as session:
        session.execute(
            update(OutboxTask)
            .where(OutboxTask.status == OutboxStatus.SENT)
            .values(sent_at=OutboxTask.sent_at - back, started_at=OutboxTask.started_at - back)
        )


def test_lost_tasks_are_sent_again_then_given_up_with_the_reason(
    sessions: sessionmaker[Session], settings: Settings
) -> None:
    doc = pending_document(sessions)
    with session_scope(sessions) as session:
        enqueue(session, process_document(doc, 1))
    outbox = _settings(settings, visibility_timeout_s=60, max_resends=1)
    queue = RecordingQueue()
    assert relay_once(sessions, queue, outbox).sent == 1
    _age_sent_rows(sessions, 120)  # queued but never started: the broker lost it
    report = relay_once(sessions, queue, outbox)
    assert (report.expired, report.sent) == (1, 1)
    assert _rows(sessions)[0].resends == 0  # a task that never ran is not counted against it
    with session_scope(sessions) as session:
        record_start(session, "document.process", [str(doc), 1])
    _age_sent_rows(sessions, 120)  # started, then silent: its worker died
    assert relay_once(sessions, queue, outbox).sent == 1
    with session_scope(sessions) as session:
        record_start(session, "document.process", [str(doc), 1])
        record_failure(session, "document.process", [str(doc), 1], "ValueError: boom")
    report = relay_once(sessions, queue, outbox)
    assert (report.given_up, report.sent) == (1, 0)
    (row,) = _rows(sessions)
    assert row.status == OutboxStatus.FAILED and row.resends == 2
    with session_scope(sessions) as session:
        failed = session.get(Knowledge, doc)
        assert failed is not None
        assert failed.parse_status == ParseStatus.FAILED
        assert failed.error == "document.process given up after 2 resends: ValueError: boom"
    assert len(queue.sent) == 3


def test_a_given_up_evaluation_run_ends_failed_with_the_reason(
    sessions: sessionmaker[Session], settings: Settings
) -> None:
    kb = _document_base(sessions)
    run_id, set_id = uuid.uuid4(), uuid.uuid4()
    with session_scope(sessions) as session:
        tenant = session.get(KnowledgeBase, kb)
        assert tenant is not None
        session.add(
            EvalSet(id=set_id, tenant_id=tenant.tenant_id, kb_id=kb, name="s", question_count=1)
        )
        session.flush()
        session.add(
            EvalRun(
                id=run_id,
                tenant_id=tenant.tenant_id,
                kb_id=kb,
                set_id=set_id,
                name="r",
                status=EvalRunStatus.RUNNING,
                config={},
                done=0,
                total=1,
            )
        )
        session.flush()
        enqueue(session, run_evaluation(run_id))
    outbox = _settings(settings, visibility_timeout_s=60, max_resends=0)
    queue = RecordingQueue()
    given_up = 0
    for _ in range(3):  # sent, started and silent (its worker died), given up
        given_up += relay_once(sessions, queue, outbox).given_up
        with session_scope(sessions) as session:
            record_start(session, "eval.run", [str(run_id)])
        _age_sent_rows(sessions, 120)
    assert given_up == 1
    with session_scope(sessions) as session:
        run = session.get(EvalRun, run_id)
        assert run is not None and run.status is EvalRunStatus.FAILED
        assert run.error is not None and run.error.startswith("eval.run given up after 1 resends")


def _document_base(sessions: sessionmaker[Session]) -> uuid.UUID:
    """The base of a new pending document."""
    doc = pending_document(sessions)
    with session_scope(sessions) as session:
        row = session.get(Knowledge, doc)
        assert row is not None
        return row.kb_id


def _finalizing_chunk(sessions: sessionmaker[Session]) -> tuple[uuid.UUID, uuid.UUID]:
    """A document waiting on one pending chunk (its graph work): (document, chunk)."""
    doc, (chunk,) = finalizing_document(sessions, ["a chunk"])
    return doc, chunk


def test_a_chunk_settlement_deletes_its_task_row_in_the_same_statement(
    sessions: sessionmaker[Session],
) -> None:
    doc, chunk = _finalizing_chunk(sessions)
    request = extract_chunk(doc, 1, chunk)
    lease = TaskLease.of(request)
    with session_scope(sessions) as session:
        enqueue(session, request)
    with session_scope(sessions) as session:
        status = finish_chunk_subtask(session, doc, 1, chunk, GraphStatus.DONE, lease=lease)
    assert status is ParseStatus.COMPLETED
    assert _rows(sessions) == []
    # Delivered again (its row written anew): nothing settles a second time, the row still goes.
    with session_scope(sessions) as session:
        enqueue(session, request)
    with session_scope(sessions) as session:
        assert finish_chunk_subtask(session, doc, 1, chunk, GraphStatus.DONE, lease=lease) is None
    assert _rows(sessions) == []
    with session_scope(sessions) as session:
        done = session.get(Knowledge, doc)
        assert done is not None
        assert (done.parse_status, done.pending_subtasks_count) == (ParseStatus.COMPLETED, 0)
