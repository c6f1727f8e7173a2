"""The `graphrag` command line: run the API and workers, migrate, and check the services.

The CLI is an edge like `api/` and `workers/`: it imports them lazily, inside the commands.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import cast

import typer
from pydantic import ValidationError
from rich.console import Console

from cli.evaluation import eval_app
from cli.interactions import interactions_app
from cli.keys import keys_app
from graphrag.settings import get_settings

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Local-first GraphRAG backend.")
app.add_typer(keys_app, name="keys")
app.add_typer(interactions_app, name="interactions")
app.add_typer(eval_app, name="eval")
console = Console()


@app.callback()
def _check_settings() -> None:
    """Read the settings before any command: a refused configuration (a default password in
    production, say) ends the command at once with the reason, not with a traceback."""
    try:
        get_settings()
    except ValidationError as exc:
        errors = Console(stderr=True)
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"]) or "settings"
            message = f"configuration refused ({where}): {error['msg']}"
            errors.print(message, style="red", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(code=2) from None


@app.command()
def migrate() -> None:
    """Apply the database migrations (waits for the database first)."""
    from graphrag.db.migrate import upgrade_to_head

    upgrade_to_head(get_settings())
    console.print("[green]database at the newest schema[/]")


@app.command()
def serve(
    host: str | None = typer.Option(None, help="bind address (settings: api.host)"),
    port: int | None = typer.Option(None, help="port (settings: api.port)"),
) -> None:
    """Run the REST API (forwarded headers believed from `api.forwarded_allow_ips` only)."""
    import uvicorn

    from api.app import create_app
    from api.serving import server_options

    settings = get_settings()
    uvicorn.run(
        create_app(settings),
        host=host or settings.api.host,
        port=port or settings.api.port,
        log_level=settings.log_level.lower(),
        **server_options(settings),
    )


@app.command()
def worker(
    queues: str = typer.Option("", help="comma-separated queues (default: all)"),
    concurrency: int = typer.Option(
        0, help="processes or threads (default: LLM slots for threads, else CPU count)"
    ),
    pool: str = typer.Option(
        "auto", help="auto (threads for the graph queue alone, else prefork), threads, prefork"
    ),
    metrics_port: int = typer.Option(-1, help="Prometheus exporter port (settings; 0: none)"),
    name: str = typer.Option(
        "", help="node name, e.g. graph1@%h (default: the queues, e.g. docparse-default@host)"
    ),
    beat: bool = typer.Option(False, help="also run the periodic reconciler (one per cluster)"),
) -> None:
    """Run the workers: with no options, the fast layout (the graph queue on threads sized to
    the LLM's slots, every other queue on processes, two workers in one command); with
    options, one Celery worker as they say."""
    if not (queues or concurrency or name) and pool == "auto":
        from cli.worker_layout import run_fast_layout

        settings = get_settings()
        port = metrics_port if metrics_port >= 0 else settings.metrics.worker_port
        console.print("worker: the fast layout, a graph worker and a worker for the other queues")
        raise typer.Exit(run_fast_layout(settings, port, beat))
    # Many small matrix products per embedding batch: threaded BLAS only contends for the cores
    # the worker processes already use. Must be set before numpy loads.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from workers.metrics import prepare_multiprocess_dir, start_exporter

    settings = get_settings()
    port = metrics_port if metrics_port >= 0 else settings.metrics.worker_port
    if port:
        prepare_multiprocess_dir(settings, port)  # before any metric exists
    from workers.celery_app import app as celery_app
    from workers.node_name import default_node_name
    from workers.pool import PoolChoice, choose_pool, warm_up_on_start
    from workers.task_logs import set_per_task_log_level
    from workers.worker_argv import celery_worker_argv

    c = settings.celery
    names = queues or ",".join(c.queues)
    if pool not in ("auto", "threads", "prefork"):
        raise typer.BadParameter("pool must be auto, threads or prefork", param_hint="--pool")
    chosen, size = choose_pool(settings, names.split(","), cast("PoolChoice", pool), concurrency)
    schedule = settings.resolve(c.beat_schedule_file) if beat else None
    if schedule is not None:
        schedule.parent.mkdir(parents=True, exist_ok=True)
    node_name = name or default_node_name(names.split(","))
    argv = celery_worker_argv(c, settings.log_level, names, chosen, size, node_name, schedule)
    if port:
        start_exporter(settings, port)
    warm_up_on_start(chosen, size)
    set_per_task_log_level(c.per_task_log_level)
    console.print(f"worker: queues {names}, pool {chosen}, concurrency {size or 'CPU count'}")
    celery_app.worker_main(argv)


@app.command()
def ingest(
    paths: list[Path] = typer.Argument(..., exists=True, help="files or folders to upload"),
    kb: str = typer.Option(..., "--kb", help="knowledge base name (created if missing)"),
    graph: bool = typer.Option(False, help="build the knowledge graph (needs NEO4J_ENABLE=true)"),
) -> None:
    """Upload documents and follow each one until it is completed or failed."""
    from cli.ingest import run_ingest
    from cli.services import command_services

    with command_services(get_settings()) as services:
        states = run_ingest(services, console, paths, kb, graph)
    if any(s.status.value != "completed" for s in states):
        raise typer.Exit(code=1)


@app.command()
def ask(
    question: str = typer.Argument(..., help="the question"),
    kb: str = typer.Option(..., "--kb", help="knowledge base name"),
) -> None:
    """Ask a question over a knowledge base; the answer streams, then its references."""
    from cli.chat import ask as ask_question

    if not ask_question(get_settings(), console, kb, question):
        raise typer.Exit(code=1)


@app.command()
def demo(
    path: Path = typer.Argument(Path("deploy/local/samples"), exists=True, help="documents"),
) -> None:
    """The main job end to end: ingest the samples with their graph, then ask a question."""
    from cli.chat import ask as ask_question
    from cli.ingest import run_ingest
    from cli.services import command_services

    settings = get_settings()
    cli = settings.cli
    graph = settings.neo4j.enable
    console.rule("1. ingest" + (" and build the knowledge graph" if graph else ""))
    with command_services(settings) as services:
        states = run_ingest(services, console, [path], cli.demo_kb_name, graph)
    console.rule("2. ask")
    answered = ask_question(settings, console, cli.demo_kb_name, cli.demo_question)
    console.rule("3. where to look next")
    console.print(
        f"- the API: graphrag serve, then http://{settings.api.host}:{settings.api.port}/docs\n"
        "  (requests need a key: graphrag keys create --tenant default --name me --cap admin)\n"
        f'- more questions: graphrag ask --kb {cli.demo_kb_name} "..."\n'
        f"- your own files: graphrag ingest PATH --kb NAME --graph\n"
        "- the worker's log: data/logs/demo-worker.log; stored files: data/files\n"
        f"- the graph in Neo4j at {settings.neo4j.uri} (labels ENTITY<kb id>, ENTITY<document id>)"
    )
    if not answered or any(s.status.value != "completed" for s in states):
        raise typer.Exit(code=1)


@app.command()
def mcp(
    key: str = typer.Option(
        ..., "--key", envvar="GRAPHRAG_API_KEY", help="an API key (or GRAPHRAG_API_KEY)"
    ),
) -> None:
    """Serve the MCP tools over stdio, as the key's tenant with the key's capabilities."""
    from cli.mcp import serve_stdio

    if not serve_stdio(get_settings(), key):
        raise typer.Exit(code=1)


@app.command()
def status() -> None:
    """Print the status of PostgreSQL, Redis, the graph engine and the task outbox's backlog."""
    from cli.services import command_services
    from graphrag.system_status import collect_status

    settings = get_settings()
    with command_services(settings) as services:
        report = collect_status(settings, services.engine, services.redis, services.neo4j)
    console.print_json(json.dumps(report.model_dump()))


if __name__ == "__main__":
    app()
