"""The per-task lines (a task received, an HTTP request) follow their own level, and only they:
the loggers set are the very ones Celery's consumer and the HTTP clients write with."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx
import pytest
from celery.app import trace
from celery.worker import strategy
from openai import _base_client

from graphrag.settings import get_settings
from workers.task_logs import set_per_task_log_level


def _request_loggers() -> list[logging.Logger]:
    """The loggers of the HTTP clients: ours, and the one the OpenAI SDK calls the LLM with."""
    sdk_client = vars(_base_client).get("httpx2") or vars(_base_client)["httpx"]
    return [logging.getLogger(httpx.__name__), logging.getLogger(sdk_client.__name__)]


@pytest.fixture()
def restored_levels() -> Iterator[None]:
    loggers = [strategy.logger, trace.logger, *_request_loggers()]
    levels = [logger.level for logger in loggers]
    yield
    for logger, level in zip(loggers, levels, strict=True):
        logger.setLevel(level)


@pytest.mark.usefixtures("restored_levels")
def test_the_default_quiets_the_received_and_request_lines_only() -> None:
    trace.logger.setLevel(logging.INFO)
    set_per_task_log_level(get_settings().celery.per_task_log_level)
    assert not strategy.logger.isEnabledFor(logging.INFO)  # "Task ... received"
    for client in _request_loggers():
        assert not client.isEnabledFor(logging.INFO)  # "HTTP Request: ..."
    assert strategy.logger.isEnabledFor(logging.WARNING)
    assert trace.logger.isEnabledFor(logging.INFO)  # "Task ... succeeded in ...", retries


@pytest.mark.usefixtures("restored_levels")
def test_info_brings_the_lines_back() -> None:
    set_per_task_log_level("INFO")
    assert strategy.logger.isEnabledFor(logging.INFO)
    assert all(client.isEnabledFor(logging.INFO) for client in _request_loggers())
