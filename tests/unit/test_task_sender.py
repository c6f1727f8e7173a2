"""The producers' task client: send-only, same routes as the worker, no worker app built."""

from __future__ import annotations

import subprocess
import sys

import pytest

from graphrag.settings import get_settings
from workers.queue import sender_queue

pytestmark = pytest.mark.unit


def test_the_api_and_cli_import_no_worker_app() -> None:
    """Importing the API factory and the CLI's producers never builds the worker's Celery app
    nor loads a task module (that happens only in a worker process)."""
    code = (
        "import sys, api.app, cli.ingest, cli.mcp\n"
        "from api.app import create_app\n"
        "loaded = sorted(m for m in sys.modules if m == 'workers.celery_app'"
        " or m.startswith('workers.tasks_') or m == 'workers.outbox_hooks')\n"
        "print(','.join(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == ""


@pytest.mark.parametrize(
    ("task", "queue_attr"),
    [
        ("document.process", "docparse_queue"),
        ("graph.extract_chunk", "graph_queue"),
        ("memory.close_session", "memory_queue"),
        ("system.ping", "default_queue"),
    ],
)
def test_the_sender_routes_like_the_worker(task: str, queue_attr: str) -> None:
    settings = get_settings()
    app = sender_queue(settings).app
    route = app.amqp.router.route({}, task)
    assert route["queue"].name == getattr(settings.celery, queue_attr)
    assert app.conf.task_serializer == "json"
    assert not app.conf.include  # no task module: it only sends by name
