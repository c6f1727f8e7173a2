"""`graphrag ingest`: upload local files and follow each document to a terminal status."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from graphrag.db.enums import Stage, StageStatus
from graphrag.ingest.batch import DocumentState, ensure_kb_by_name, poll_states, submit_files
from graphrag.ingest.run_summary import RunSummary, summarize
from graphrag.llm.server_info import slot_limit
from graphrag.outbox.relay import relay_once
from graphrag.services import Services

__all__ = ["run_ingest"]


def _describe(state: DocumentState) -> tuple[str, int, int]:
    """A label and a (done, total) pair for the stage the document is in."""
    for stage in reversed(Stage):
        info = state.progress.get(stage)
        if info is not None and info.status is StageStatus.RUNNING:
            return stage.value, info.done, info.total
    return state.status.value, 1 if state.terminal else 0, 1


def _expand(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        files.extend(sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path])
    return files


def run_ingest(
    run: Services, console: Console, paths: list[Path], kb_name: str, graph: bool
) -> list[DocumentState]:
    """Upload, then show one progress bar per document until all are terminal (or time out)."""
    kb_id = ensure_kb_by_name(run.sessions, run.settings, run.graph, kb_name, graph_enabled=graph)
    started = time.monotonic()
    submitted = submit_files(run.sessions, run.settings, run.storage, kb_id, _expand(paths))
    # The workers' relays send the rows within a second; one pass here starts them at once.
    relay_once(run.sessions, run.queue, run.settings.outbox)
    for item in submitted:
        if item.error:
            console.print(f"[red]refused[/] {item.path}: {item.error}")
        elif item.duplicate:
            console.print(f"[yellow]already there[/] {item.path} -> {item.knowledge_id}")
    ids = [s.knowledge_id for s in submitted if s.knowledge_id is not None]
    names = {s.knowledge_id: Path(s.path).name for s in submitted}
    states = _follow(run, console, ids, names)
    _summary(console, states, names)
    if graph and states:
        slots = slot_limit(run.settings.llm)
        _run_figures(console, summarize(states, time.monotonic() - started, slots))
    return states


def _follow(
    run: Services, console: Console, ids: list[uuid.UUID], names: dict[uuid.UUID | None, str]
) -> list[DocumentState]:
    cli = run.settings.cli
    deadline = time.monotonic() + cli.wait_timeout_s
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[stage]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console) as progress:
        bars: dict[uuid.UUID, TaskID] = {
            i: progress.add_task(names[i], total=1, stage="pending") for i in ids
        }
        while True:
            states = poll_states(run.sessions, ids)
            for state in states:
                stage, done, total = _describe(state)
                progress.update(
                    bars[state.knowledge_id], completed=done, total=max(total, 1), stage=stage
                )
            if all(s.terminal for s in states) or time.monotonic() > deadline:
                return states
            time.sleep(cli.poll_interval_s)


def _summary(
    console: Console, states: list[DocumentState], names: dict[uuid.UUID | None, str]
) -> None:
    table = Table("document", "status", "chunks", "entities", "relations", "failed chunks", "error")
    for s in states:
        colour = {"completed": "green", "failed": "red"}.get(s.status.value, "yellow")
        table.add_row(
            names[s.knowledge_id],
            f"[{colour}]{s.status.value}[/]",
            str(s.chunk_count),
            str(s.entity_count),
            str(s.relation_count),
            str(s.failed_chunk_count),
            s.error or "",
        )
    console.print(table)


def _run_figures(console: Console, run: RunSummary) -> None:
    table = Table(
        "documents/s",
        "LLM calls",
        "calls/doc",
        "tokens/doc (prompt+completion)",
        "slot utilisation",
        title=f"{run.completed}/{run.documents} documents in "
        f"{run.wall_s:.1f} s, {run.slots} LLM slots",
    )
    table.add_row(
        f"{run.documents_per_s:.2f}",
        str(run.llm_calls),
        f"{run.calls_per_document:.2f}",
        f"{run.prompt_tokens_per_document:.0f}+{run.completion_tokens_per_document:.0f}",
        f"{run.slot_utilisation:.0%}",
    )
    console.print(table)
