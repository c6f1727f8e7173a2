"""Evaluation of a knowledge base: question sets, runs, their results and comparisons.

Reading needs `read`, uploading, starting, cancelling and deleting need `write` (`TenantDep`
by method); another tenant's base, set or run is not found.
"""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, File, Form, Response, UploadFile, status

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


@router.post("/eval-sets", status_code=status.HTTP_201_CREATED)
def upload_set(
    kb_id: uuid.UUID,
    session: SessionDep,
    settings: SettingsDep,
    tenant: TenantDep,
    file: Annotated[UploadFile, File(description="JSONL: one question a line")],
    name: Annotated[InputText, Form(max_length=200)] = "",
) -> EvalSetPublic:
    """Check a JSONL question set line by line and store it (422 naming the first bad line)."""
    data = read_capped(file, settings.evaluation.max_set_bytes)
    limits = settings.evaluation
    return question_sets.add_set(session, limits, tenant, kb_id, name or file.filename or "", data)


@router.get("/eval-sets")
def list_sets(
    kb_id: uuid.UUID, session: SessionDep, settings: SettingsDep, tenant: TenantDep
) -> dict[str, list[EvalSetPublic]]:
    return {"items": question_sets.list_sets(session, settings.evaluation, tenant, kb_id)}


@router.get("/eval-sets/{set_id}")
def get_set(
    kb_id: uuid.UUID, set_id: uuid.UUID, session: SessionDep, tenant: TenantDep
) -> EvalSetDetail:
    return question_sets.get_set(session, tenant, kb_id, set_id)


@router.delete("/eval-sets/{set_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_set(
    kb_id: uuid.UUID, set_id: uuid.UUID, session: SessionDep, tenant: TenantDep
) -> Response:
    """Delete a set with its runs."""
    question_sets.delete_set(session, tenant, kb_id, set_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/eval-runs", status_code=status.HTTP_202_ACCEPTED)
def start_run(
    kb_id: uuid.UUID,
    body: EvalRunCreate,
    session: SessionDep,
    settings: SettingsDep,
    relay: RelayDep,
    tenant: TenantDep,
) -> EvalRunPublic:
    """Queue a run of a set with a configuration (nulls: the base's own)."""
    run = runs.create_run(session, settings, tenant, kb_id, body)
    commit_and_kick(session, relay)
    return run


@router.get("/eval-runs")
def list_runs(
    kb_id: uuid.UUID, session: SessionDep, settings: SettingsDep, tenant: TenantDep
) -> dict[str, list[EvalRunPublic]]:
    return {"items": runs.list_runs(session, settings, tenant, kb_id)}


@router.get("/eval-runs/{run_id}")
def get_run(
    kb_id: uuid.UUID, run_id: uuid.UUID, session: SessionDep, tenant: TenantDep
) -> EvalRunPublic:
    return runs.get_run(session, tenant, kb_id, run_id)


@router.get("/eval-runs/{run_id}/questions")
def list_results(
    kb_id: uuid.UUID,
    run_id: uuid.UUID,
    session: SessionDep,
    settings: SettingsDep,
    tenant: TenantDep,
) -> dict[str, list[EvalResultPublic]]:
    return {"items": runs.list_results(session, settings, tenant, kb_id, run_id)}


@router.post("/eval-runs/{run_id}/cancel", status_code=status.HTTP_202_ACCEPTED)
def cancel_run(
    kb_id: uuid.UUID, run_id: uuid.UUID, session: SessionDep, tenant: TenantDep
) -> EvalRunPublic:
    """Cancel a queued or running run; it stops before its next question."""
    return runs.cancel_run(session, tenant, kb_id, run_id)


@router.get("/eval-runs/{a}/compare/{b}")
def compare_runs(
    kb_id: uuid.UUID, a: uuid.UUID, b: uuid.UUID, session: SessionDep, tenant: TenantDep
) -> EvalComparison:
    """Every metric of run a and run b side by side (delta = b - a) and the changed questions."""
    return runs.compare_runs(session, tenant, kb_id, a, b)
