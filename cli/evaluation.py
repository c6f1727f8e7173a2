"""`graphrag eval upload|run|show|compare`: evaluation sets and runs of a base, from the shell.

The commands call the core as the REST routes do; a run is scored by the workers (the `eval`
queue), and `run` follows it with a progress bar unless told not to wait.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from sqlalchemy.orm import Session

from graphrag.db.engine import make_engine, make_session_factory, session_scope
from graphrag.errors import FileTooLargeError, GraphragError, NotFoundError
from graphrag.settings import Settings, get_settings
from graphrag.tenancy import find_tenant

__all__ = ["eval_app"]

eval_app = typer.Typer(no_args_is_help=True, help="Evaluation sets and runs of a knowledge base.")
_out = Console()
_err = Console(stderr=True)
T = TypeVar("T")
_TERMINAL = {"succeeded", "failed", "cancelled"}

KbOption = typer.Option(..., "--kb", help="the knowledge base's id")
TenantOption = typer.Option(None, help="tenant name (default: api.default_tenant)")


@contextmanager
def _session() -> Iterator[tuple[Settings, Session]]:
    settings = get_settings()
    engine = make_engine(settings)
    try:
        with session_scope(make_session_factory(engine)) as session:
            yield settings, session
    finally:
        engine.dispose()


def _call(tenant: str | None, work: Callable[[Settings, Session, uuid.UUID], T]) -> T:
    """`work` in one transaction as the tenant; a refusal ends the command with its reason."""
    try:
        with _session() as (settings, session):
            tenant_id = find_tenant(session, tenant or settings.api.default_tenant)
            if tenant_id is None:
                raise NotFoundError("no such tenant")
            return work(settings, session, tenant_id)
    except GraphragError as exc:
        _err.print(f"{exc.code}: {exc.message}", style="red", markup=False)
        raise typer.Exit(code=1) from None


def _figure(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _metrics_table(title: str, groups: dict[str, dict[str, Any]]) -> Table:
    table = Table(title=title)
    table.add_column("metric")
    for name in groups:
        table.add_column(name, justify="right")
    names = list(dict.fromkeys(key for metrics in groups.values() for key in metrics))
    for name in names:
        table.add_row(name, *(_figure(metrics.get(name)) for metrics in groups.values()))
    return table


@eval_app.command("upload")
def upload(
    path: Path = typer.Argument(..., exists=True, dir_okay=False, help="the JSONL question set"),
    kb: uuid.UUID = KbOption,
    name: str = typer.Option("", help="the set's name (default: the file's)"),
    tenant: str | None = TenantOption,
) -> None:
    """Check and store a question set (one JSON question a line)."""
    from graphrag.eval.question_sets import add_set

    data = path.read_bytes()

    def work(settings: Settings, session: Session, tenant_id: uuid.UUID) -> Any:
        if len(data) > settings.evaluation.max_set_bytes:
            raise FileTooLargeError(f"the set is over {settings.evaluation.max_set_bytes} bytes")
        return add_set(session, settings.evaluation, tenant_id, kb, name or path.name, data)

    stored = _call(tenant, work)
    _out.print(f"set {stored.id}: {stored.question_count} questions, hops {stored.hops}")


@eval_app.command("run")
def run(
    kb: uuid.UUID = KbOption,
    eval_set: uuid.UUID = typer.Option(..., "--set", help="the set's id"),
    graph: bool | None = typer.Option(None, "--graph/--no-graph", help="default: the base's"),
    top_k: int | None = typer.Option(None, help="hits fetched per question"),
    answer: bool = typer.Option(False, help="also answer each question (LLM calls)"),
    name: str = typer.Option("", help="the run's name"),
    wait: bool = typer.Option(True, help="follow the run to its end"),
    tenant: str | None = TenantOption,
) -> None:
    """Start a run of a set (the workers score it) and follow it."""
    from graphrag.eval.runs import create_run, get_run
    from graphrag.eval.schemas import EvalConfig, EvalRunCreate

    body = EvalRunCreate(
        eval_set_id=eval_set,
        name=name,
        config=EvalConfig(graph=graph, top_k=top_k, answer=answer),
    )
    started = _call(tenant, lambda s, db, t: create_run(db, s, t, kb, body))
    _out.print(f"run {started.id} queued: {started.progress['total']} questions")
    if not wait:
        return
    poll_s = get_settings().cli.poll_interval_s
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=_out) as progress:
        task = progress.add_task("scoring", total=started.progress["total"])
        while True:
            current = _call(tenant, lambda s, db, t: get_run(db, t, kb, started.id))
            progress.update(task, completed=current.progress["done"], description=current.status)
            if current.status in _TERMINAL:
                break
            time.sleep(poll_s)
    _report(current)


def _report(current: Any) -> None:
    if current.error:
        _err.print(current.error, style="red", markup=False)
    if current.metrics:
        groups = {"overall": current.metrics["overall"]}
        groups |= {f"{hops} hops": m for hops, m in current.metrics["by_hops"].items()}
        _out.print(_metrics_table(f"run {current.id} ({current.status})", groups))
    if current.status != "succeeded":
        raise typer.Exit(code=1)


@eval_app.command("show")
def show(
    run_id: uuid.UUID = typer.Argument(..., help="the run's id"),
    kb: uuid.UUID = KbOption,
    tenant: str | None = TenantOption,
) -> None:
    """A run's status and metrics (overall and per hop count)."""
    from graphrag.eval.runs import get_run

    current = _call(tenant, lambda s, db, t: get_run(db, t, kb, run_id))
    progress = current.progress
    _out.print(f"run {current.id}: {current.status}, {progress['done']}/{progress['total']}")
    _report(current)


@eval_app.command("compare")
def compare(
    a: uuid.UUID = typer.Argument(..., help="the first run"),
    b: uuid.UUID = typer.Argument(..., help="the second run"),
    kb: uuid.UUID = KbOption,
    tenant: str | None = TenantOption,
) -> None:
    """Two runs of one set side by side, and the questions one found and the other missed."""
    from graphrag.eval.runs import compare_runs

    compared = _call(tenant, lambda s, db, t: compare_runs(db, t, kb, a, b))
    table = Table(title=f"{compared.a.name} (a) against {compared.b.name} (b)")
    for column in ("metric", "a", "b", "b - a"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for metric in compared.metrics:
        table.add_row(metric.name, _figure(metric.a), _figure(metric.b), _figure(metric.delta))
    _out.print(table)
    changed = Table(title=f"{len(compared.changed)} changed questions")
    for column in ("found by", "a rank", "b rank", "question"):
        changed.add_column(column)
    for change in compared.changed:
        changed.add_row(
            change.found_by, _figure(change.a_rank), _figure(change.b_rank), change.question
        )
    _out.print(changed)
