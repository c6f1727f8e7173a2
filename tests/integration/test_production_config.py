"""Production refuses shipped passwords: `graphrag serve` and `graphrag worker`, started as real
processes against the real services, stop at once with the reason; in development the same
command serves."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.support.http_server import free_port
from tests.support.services import ROOT, worker_environment

pytestmark = pytest.mark.integration

REFUSAL_TIMEOUT_S = 120.0
STARTUP_TIMEOUT_S = 120.0
POLL_S = 0.25
PRODUCTION = {"ENVIRONMENT": "production", "AUTH_PEPPER": "a-pepper-of-our-own"}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "cli.main", *args]


def _with_password(url: str, password: str) -> str:
    """The database URL with a user and `password` (the local server ignores them on its socket)."""
    scheme, rest = url.split("://", 1)
    return f"{scheme}://graphrag:{password}@{rest.split('@', 1)[-1]}"


@pytest.mark.parametrize(
    ("command", "overrides", "named"),
    [
        (("serve",), {"NEO4J_PASSWORD": "graphrag-local"}, "NEO4J_PASSWORD"),
        (("worker", "--queues", "memory"), {"NEO4J_PASSWORD": "graphrag-local"}, "NEO4J_PASSWORD"),
        (("serve",), {"NEO4J_PASSWORD": "change-me-please"}, "NEO4J_PASSWORD"),
        (("serve",), {"DATABASE_URL": "graphrag"}, "DATABASE_URL"),
        (("worker", "--queues", "docparse"), {"DATABASE_URL": "graphrag"}, "DATABASE_URL"),
    ],
    ids=["api-neo4j", "worker-neo4j", "api-neo4j-compose", "api-postgres", "worker-postgres"],
)
def test_production_refuses_default_passwords(
    settings_env: dict[str, str], command: tuple[str, ...], overrides: dict[str, str], named: str
) -> None:
    env = {**worker_environment(settings_env), **PRODUCTION, "NEO4J_PASSWORD": "own-secret"}
    for name, value in overrides.items():
        env[name] = _with_password(env[name], value) if name == "DATABASE_URL" else value
    started = time.monotonic()
    port = free_port()
    args = [*command, "--port", str(port)] if command == ("serve",) else list(command)
    done = subprocess.run(
        _cli(*args), env=env, cwd=ROOT, capture_output=True, text=True, timeout=REFUSAL_TIMEOUT_S
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "configuration refused" in done.stderr and named in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert time.monotonic() - started < REFUSAL_TIMEOUT_S
    with pytest.raises(httpx.ConnectError):  # it never listened
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=2.0)


@contextmanager
def _serving(env: dict[str, str], port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            _cli("serve", "--port", str(port)), env=env, cwd=ROOT, stdout=sink, stderr=sink
        )
        try:
            yield proc
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_the_same_passwords_serve_in_development(
    settings_env: dict[str, str], tmp_path: Path
) -> None:
    """The control: what production refuses starts in development (so the refusal is the
    production check, not a broken command)."""
    env = {**worker_environment(settings_env), "ENVIRONMENT": "development"}
    env["NEO4J_PASSWORD"] = settings_env.get("NEO4J_PASSWORD", "graphrag-local")
    port = free_port()
    log = tmp_path / "serve.log"
    with _serving(env, port, log) as proc:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2.0).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(POLL_S)
        pytest.fail("the API did not answer /health in development")
