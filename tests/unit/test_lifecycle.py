"""The document status machine: the allowed transitions, each statement's guard held to its row
of the table, and no module but `db/lifecycle.py` writing a document's status."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.sql import visitors
from sqlalchemy.sql.elements import BindParameter

from graphrag.db.enums import ParseStatus
from graphrag.db.lifecycle import STATEMENTS, TRANSITIONS, Rule, Transition

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
LIFECYCLE = ROOT / "graphrag" / "db" / "lifecycle.py"
SCANNED = ("graphrag", "api", "workers", "cli")  # the core and the packages on top of it

P = ParseStatus
WORKING = frozenset({P.PENDING, P.PROCESSING, P.FINALIZING})
CLAIMABLE = frozenset({P.PENDING, P.PROCESSING})
LIVE = frozenset(P) - {P.DELETING}

ALLOWED = {
    Transition.ADD: Rule(frozenset(), P.PENDING),
    Transition.CLAIM: Rule(CLAIMABLE, P.PROCESSING),
    Transition.POISONED: Rule(CLAIMABLE, P.FAILED),
    Transition.QUEUE_GRAPH: Rule(CLAIMABLE, P.FINALIZING),
    Transition.INDEXED: Rule(CLAIMABLE, P.COMPLETED),
    Transition.FAIL: Rule(WORKING, P.FAILED),
    Transition.GIVE_UP: Rule(WORKING, P.FAILED),
    Transition.GRAPH_DONE: Rule(frozenset({P.FINALIZING}), P.COMPLETED),
    Transition.GRAPH_ON: Rule(frozenset({P.COMPLETED}), P.FINALIZING),
    Transition.GRAPH_OFF: Rule(frozenset({P.FINALIZING}), P.COMPLETED),
    Transition.REPARSE: Rule(LIVE, P.PENDING),
    Transition.CANCEL: Rule(WORKING, P.CANCELLED),
    Transition.DELETE: Rule(LIVE, P.DELETING),
    Transition.DELETE_BASE: Rule(LIVE, P.DELETING),
}
# The transitions not tied to one attempt: a new row, the reconciler's batch (its pairs of
# document and attempt) and a base's deletion (every document of the base).
NOT_ONE_ATTEMPT = {Transition.ADD, Transition.GIVE_UP, Transition.DELETE_BASE}


def test_the_allowed_transitions() -> None:
    assert dict(TRANSITIONS) == ALLOWED
    assert set(TRANSITIONS) == set(Transition) == set(STATEMENTS)


def test_nothing_leaves_deleting_and_terminal_states_leave_only_by_request() -> None:
    leaving_deleting = [t for t, rule in TRANSITIONS.items() if P.DELETING in rule.sources]
    assert leaving_deleting == []
    for terminal in (P.FAILED, P.CANCELLED):
        leaving = {t for t, rule in TRANSITIONS.items() if terminal in rule.sources}
        assert leaving == {Transition.REPARSE, Transition.DELETE, Transition.DELETE_BASE}


def _binds(transition: Transition) -> list[BindParameter[object]]:
    return [e for e in visitors.iterate(STATEMENTS[transition]) if isinstance(e, BindParameter)]


def _statuses(value: object) -> frozenset[ParseStatus]:
    values = value if isinstance(value, list) else [value]
    return frozenset(v for v in values if isinstance(v, ParseStatus))


@pytest.mark.parametrize("transition", list(Transition))
def test_each_statement_guards_by_its_rule(transition: Transition) -> None:
    """The statuses a statement tests (its one IN list) are the rule's sources, the status it
    writes is the rule's target, and nothing else of the statement names a status."""
    binds = _binds(transition)
    guards = [_statuses(b.value) for b in binds if b.expanding and _statuses(b.value)]
    written = frozenset().union(*(_statuses(b.value) for b in binds if not b.expanding))
    rule = TRANSITIONS[transition]
    assert guards == ([rule.sources] if rule.sources else [])
    assert written == {rule.target}
    names = {b.key for b in binds}
    assert ("p_attempt" in names) is (transition not in NOT_ONE_ATTEMPT)


def _status_writes(source: str) -> Iterator[int]:
    """Lines of `source` that write a document's status: an assignment to `.parse_status`, a
    `parse_status` key of a row or of SET values, a `parse_status=` argument of `values()`, of
    the model or of `setattr`."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Attribute) and t.attr == "parse_status" for t in targets):
                yield node.lineno
        elif isinstance(node, ast.Dict):
            if any(isinstance(k, ast.Constant) and k.value == "parse_status" for k in node.keys):
                yield node.lineno
        elif isinstance(node, ast.Call) and _writes_by_call(node):
            yield node.lineno


def _writes_by_call(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name == "setattr":
        return any(isinstance(a, ast.Constant) and a.value == "parse_status" for a in call.args)
    keywords = {k.arg for k in call.keywords}
    return name in {"values", "ordered_values", "Knowledge"} and "parse_status" in keywords


WRITES = """
doc.parse_status = ParseStatus.FAILED
session.execute(update(Knowledge).values(parse_status=ParseStatus.FAILED))
session.execute(insert(_KNOWLEDGE), {"id": doc_id, "parse_status": "pending"})
session.add(Knowledge(parse_status=ParseStatus.PENDING))
setattr(doc, "parse_status", ParseStatus.CANCELLED)
"""
READS = """
done = doc.parse_status == ParseStatus.COMPLETED
query = select(Knowledge).where(Knowledge.parse_status != ParseStatus.DELETING)
stages = KnowledgeStages(parse_status=doc.parse_status)
"""


def test_the_scan_tells_writes_from_reads() -> None:
    assert sorted(_status_writes(WRITES)) == [2, 3, 4, 5, 6]
    assert list(_status_writes(READS)) == []
    assert list(_status_writes(LIFECYCLE.read_text(encoding="utf-8")))


def test_no_module_but_the_lifecycle_writes_a_document_status() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for package in SCANNED
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != LIFECYCLE
        for line in _status_writes(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
