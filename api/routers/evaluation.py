"""Evaluation of a knowledge base: question sets, runs, their results and comparisons.

Reading needs `read`, uploading, starting, cancelling and deleting need `write` (`TenantDep`
by method); another tenant's base, set or run is not found.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, File, Form, Response, UploadFile, status

from api.deps import RelayDep, SessionDep, SettingsDep, TenantDep
from api.dispatch import commit_and_kick
from api.uploads import read_capped
from graphrag.eval import question_sets, runs
from graphrag.eval.schemas import (
    EvalComparison,
    EvalResultPublic,
    EvalRunCreate,
    EvalRunPublic,
    EvalSetDetail,
    EvalSetPublic,
)
from graphrag.text_input import InputText

router = APIRouter(prefix="/api/v1/knowledge-bases/{kb_id}", tags=["evaluation"])


@dataclass
class _Base:
    """The base of the path, the caller's tenant (`read` or `write` by method), a session."""

    kb_id: uuid.UUID
    session: SessionDep
    tenant: TenantDep


BaseDep = Annotated[_Base, Depends()]


@router.post("/eval-sets", status_code=status.HTTP_201_CREATED)
def upload_set(
    at: BaseDep,
    settings: SettingsDep,
    file: Annotated[UploadFile, File(description="JSONL: one question a line")],
    name: Annotated[InputText, Form(max_length=200)] = "",
) -> EvalSetPublic:
    """Check a JSONL question set line by line and store it (422 naming the first bad line)."""
    limits = settings.evaluation
    data = read_capped(file, limits.max_set_bytes)
    named = name or file.filename or ""
    return question_sets.add_set(at.session, limits, at.tenant, at.kb_id, named, data)


@router.get("/eval-sets")
def list_sets(at: BaseDep, settings: SettingsDep) -> dict[str, list[EvalSetPublic]]:
    limits = settings.evaluation
    return {"items": question_sets.list_sets(at.session, limits, at.tenant, at.kb_id)}


@router.get("/eval-sets/{set_id}")
def get_set(set_id: uuid.UUID, at: BaseDep) -> EvalSetDetail:
    return question_sets.get_set(at.session, at.tenant, at.kb_id, set_id)


@router.delete("/eval-sets/{set_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_set(set_id: uuid.UUID, at: BaseDep) -> Response:
    """Delete a set with its runs."""
    question_sets.delete_set(at.session, at.tenant, at.kb_id, set_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/eval-runs", status_code=status.HTTP_202_ACCEPTED)
def start_run(
    body: EvalRunCreate, at: BaseDep, settings: SettingsDep, relay: RelayDep
) -> EvalRunPublic:
    """Queue a run of a set with a configuration (nulls: the base's own)."""
    run = runs.create_run(at.session, settings, at.tenant, at.kb_id, body)
    commit_and_kick(at.session, relay)
    return run


@router.get("/eval-runs")
def list_runs(at: BaseDep, settings: SettingsDep) -> dict[str, list[EvalRunPublic]]:
    return {"items": runs.list_runs(at.session, settings, at.tenant, at.kb_id)}


@router.get("/eval-runs/{run_id}")
def get_run(run_id: uuid.UUID, at: BaseDep) -> EvalRunPublic:
    return runs.get_run(at.session, at.tenant, at.kb_id, run_id)


@router.get("/eval-runs/{run_id}/questions")
def list_results(
    run_id: uuid.UUID, at: BaseDep, settings: SettingsDep
) -> dict[str, list[EvalResultPublic]]:
    return {"items": runs.list_results(at.session, settings, at.tenant, at.kb_id, run_id)}


@router.post("/eval-runs/{run_id}/cancel", status_code=status.HTTP_202_ACCEPTED)
def cancel_run(run_id: uuid.UUID, at: BaseDep) -> EvalRunPublic:
    """Cancel a queued or running run; it stops before its next question."""
    return runs.cancel_run(at.session, at.tenant, at.kb_id, run_id)


@router.get("/eval-runs/{a}/compare/{b}")
def compare_runs(a: uuid.UUID, b: uuid.UUID, at: BaseDep) -> EvalComparison:
    """Every metric of run a and run b side by side (delta = b - a) and the changed questions."""
    return runs.compare_runs(at.session, at.tenant, at.kb_id, a, b)
