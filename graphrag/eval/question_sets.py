"""Evaluation sets: a JSONL file checked line by line, its gold documents resolved, stored.

Each line is one question: `question`, optional `answer` and `answer_aliases`, `gold` (the
base's document ids, file names or titles, i.e. file names without their extension), `hops`
and `tags`; other keys (a set's own `id`, `pool`) are ignored. The first bad line is refused
with its number (422 `eval_set_invalid`), and nothing is stored; a set is stored whole or not.
"""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import PurePath

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from graphrag.db.enums import ParseStatus
from graphrag.db.models import EvalQuestion, EvalSet, Knowledge
from graphrag.errors import EvalSetInvalidError
from graphrag.eval.rows import newest_rows, owned_row
from graphrag.eval.schemas import EvalQuestionPublic, EvalSetDetail, EvalSetPublic
from graphrag.kb.service import require_live_kb
from graphrag.settings import EvaluationSettings

__all__ = [
    "add_set",
    "delete_set",
    "get_set",
    "list_sets",
    "parse_set",
    "questions_of",
    "set_row",
]


class _Line(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)

    question: str = Field(min_length=1)
    answer: str | None = None
    answer_aliases: list[str] = Field(default_factory=list)
    gold: list[str] = Field(default_factory=list)
    hops: int | None = Field(default=None, ge=1)
    tags: list[str] = Field(default_factory=list)


def _refuse(line: int, message: str) -> EvalSetInvalidError:
    return EvalSetInvalidError(f"line {line}: {message}", line=line)


def _checked(number: int, raw: str, limits: EvaluationSettings) -> _Line:
    try:
        line = _Line.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise _refuse(number, f"{where}: {first['msg']}" if where else first["msg"]) from exc
    caps = (
        (len(line.question) > limits.max_question_chars, "question", limits.max_question_chars),
        (len(line.answer or "") > limits.max_answer_chars, "answer", limits.max_answer_chars),
        (len(line.answer_aliases) > limits.max_aliases, "answer_aliases", limits.max_aliases),
        (len(line.gold) > limits.max_gold, "gold", limits.max_gold),
        (len(line.tags) > limits.max_tags, "tags", limits.max_tags),
    )
    for over, name, cap in caps:
        if over:
            raise _refuse(number, f"{name} is over its cap of {cap}")
    if any(len(a) > limits.max_answer_chars for a in line.answer_aliases):
        raise _refuse(number, f"an alias is over {limits.max_answer_chars} characters")
    if any(len(t) > limits.max_tag_chars or not t.strip() for t in line.tags):
        raise _refuse(number, f"a tag is empty or over {limits.max_tag_chars} characters")
    return line


def parse_set(data: bytes, limits: EvaluationSettings) -> list[tuple[int, _Line]]:
    """The questions of a JSONL set with their line numbers (blank lines skipped)."""
    if data.count(b"\n") + 1 > limits.max_questions * 2:
        raise EvalSetInvalidError(f"a set holds at most {limits.max_questions} questions")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EvalSetInvalidError("the set is not UTF-8 text") from exc
    lines = [(n, raw) for n, raw in enumerate(text.splitlines(), start=1) if raw.strip()]
    if not lines:
        raise EvalSetInvalidError("the set holds no question")
    if len(lines) > limits.max_questions:
        raise EvalSetInvalidError(f"a set holds at most {limits.max_questions} questions")
    return [(n, _checked(n, raw, limits)) for n, raw in lines]


def _document_names(session: Session, kb_id: uuid.UUID) -> dict[str, set[str]]:
    """What a gold entry may say for each live document: its id, file name and title."""
    rows = session.execute(
        select(Knowledge.id, Knowledge.file_name).where(
            Knowledge.kb_id == kb_id, Knowledge.parse_status != ParseStatus.DELETING
        )
    ).all()
    names: dict[str, set[str]] = {}
    for doc_id, file_name in rows:
        for name in {str(doc_id), file_name, PurePath(file_name).stem}:
            names.setdefault(name, set()).add(str(doc_id))
    return names


def _resolved(number: int, gold: list[str], names: dict[str, set[str]]) -> list[str]:
    ids: list[str] = []
    for entry in gold:
        found = names.get(entry.strip())
        if not found:
            raise _refuse(number, f"gold {entry!r} is no document of this base")
        if len(found) > 1:
            raise _refuse(number, f"gold {entry!r} names {len(found)} documents; give its id")
        ids.extend(found)
    return list(dict.fromkeys(ids))


def add_set(
    session: Session,
    limits: EvaluationSettings,
    tenant_id: uuid.UUID,
    kb_id: uuid.UUID,
    name: str,
    data: bytes,
) -> EvalSetPublic:
    """Check and store a set in the caller's transaction (nothing on any error)."""
    require_live_kb(session, tenant_id, kb_id)
    parsed = parse_set(data, limits)
    names = _document_names(session, kb_id)
    rows = [
        {
            "id": uuid.uuid4(),
            "seq": number,
            "question": line.question,
            "answer": line.answer,
            "answer_aliases": line.answer_aliases,
            "gold": _resolved(number, line.gold, names),
            "hops": line.hops,
            "tags": line.tags,
        }
        for number, line in parsed
    ]
    eval_set = EvalSet(
        id=uuid.uuid4(),
        tenant_id=tenant_id,
        kb_id=kb_id,
        name=name[: limits.max_name_chars] or f"set of {len(rows)} questions",
        question_count=len(rows),
    )
    session.add(eval_set)
    session.flush()
    session.execute(insert(EvalQuestion), [{**row, "set_id": eval_set.id} for row in rows])
    session.flush()
    session.refresh(eval_set)
    return _public(eval_set, [line for _, line in parsed])


def _public(eval_set: EvalSet, lines: list[_Line] | list[EvalQuestion]) -> EvalSetPublic:
    hops = Counter(str(line.hops) for line in lines if line.hops is not None)
    tags = sorted({tag for line in lines for tag in line.tags})
    return EvalSetPublic(
        id=eval_set.id,
        kb_id=eval_set.kb_id,
        name=eval_set.name,
        question_count=eval_set.question_count,
        hops=dict(hops),
        tags=tags,
        created_at=eval_set.created_at,
    )


def set_row(session: Session, tenant_id: uuid.UUID, kb_id: uuid.UUID, set_id: uuid.UUID) -> EvalSet:
    """A set of this tenant's base, else 404."""
    return owned_row(session, EvalSet, tenant_id, kb_id, set_id)


def questions_of(session: Session, set_id: uuid.UUID) -> list[EvalQuestion]:
    """The set's questions in file order."""
    return list(
        session.scalars(
            select(EvalQuestion).where(EvalQuestion.set_id == set_id).order_by(EvalQuestion.seq)
        )
    )


def list_sets(
    session: Session, limits: EvaluationSettings, tenant_id: uuid.UUID, kb_id: uuid.UUID
) -> list[EvalSetPublic]:
    """The base's sets, newest first."""
    rows = newest_rows(session, EvalSet, tenant_id, kb_id, limits.max_sets_listed)
    return [_public(row, questions_of(session, row.id)) for row in rows]


def get_set(
    session: Session, tenant_id: uuid.UUID, kb_id: uuid.UUID, set_id: uuid.UUID
) -> EvalSetDetail:
    """One set with its questions."""
    row = set_row(session, tenant_id, kb_id, set_id)
    questions = questions_of(session, row.id)
    public = _public(row, questions)
    listed = [EvalQuestionPublic.model_validate(q) for q in questions]
    return EvalSetDetail(**public.model_dump(), questions=listed)


def delete_set(session: Session, tenant_id: uuid.UUID, kb_id: uuid.UUID, set_id: uuid.UUID) -> None:
    """Delete a set with its runs and results (the database cascades)."""
    session.delete(set_row(session, tenant_id, kb_id, set_id))
    session.flush()
