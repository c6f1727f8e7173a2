"""Tests driving documents through the core on a database and queues of their own: no relay or
worker of the session sends or runs their tasks, so each task waits until the test runs it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from celery import Celery
from sqlalchemy.orm import Session, sessionmaker

from graphrag.settings import Settings
from tests.support.isolated_worker import on_own_queues, own_database


@pytest.fixture()
def session_factory(
    settings: Settings, settings_env: dict[str, str], services_env: dict[str, str]
) -> Iterator[sessionmaker[Session]]:
    """A database of this test's own: the session's worker and API relays never send its
    outbox rows, so its tasks wait as the test means them to."""
    moved, env = on_own_queues(settings, settings_env)
    with own_database(services_env["DATABASE_URL"], moved, env) as (_, _, sessions):
        yield sessions


@pytest.fixture()
def idle_celery(settings: Settings, settings_env: dict[str, str]) -> Iterator[Celery]:
    """A Celery client on queues no worker listens to: tasks wait, then go with the purge."""
    from workers.celery_app import create_celery

    own, _ = on_own_queues(settings, settings_env)
    celery = create_celery(own)
    celery.control.purge()
    yield celery
    celery.control.purge()
