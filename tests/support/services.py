"""Start the real local services once per test session and hand out isolated databases."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from graphrag.settings import Settings, project_root

__all__ = ["create_database", "drop_database", "start_local_services", "test_settings"]

ROOT = project_root()


def start_local_services(with_neo4j: bool = True) -> dict[str, str]:
    """Run deploy/local/services.py start (idempotent) and return the environment it wrote."""
    args = [sys.executable, str(ROOT / "deploy/local/services.py"), "start"]
    args.append("--neo4j" if with_neo4j else "--no-neo4j")
    subprocess.run(args, check=True, cwd=ROOT)
    env_file = ROOT / "data" / "services.env"
    return dict(line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line)


def _admin_url(server_url: str) -> str:
    return make_url(server_url).set(database="postgres").render_as_string(hide_password=False)


def create_database(server_url: str, prefix: str) -> str:
    """A fresh empty database on the server; returns its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    engine = create_engine(_admin_url(server_url), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


def drop_database(url: str) -> None:
    name = make_url(url).database
    engine = create_engine(_admin_url(url), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    engine.dispose()


def test_settings(env: dict[str, str], **overrides: object) -> Settings:
    """Settings for tests: the YAML defaults, the started services, then explicit overrides."""
    for key, value in env.items():
        os.environ[key] = value
    return Settings(environment="test", **overrides)  # type: ignore[arg-type]


def worker_environment(settings_env: dict[str, str]) -> dict[str, str]:
    """The environment a worker subprocess needs to reach the same services and database."""
    env = {**os.environ, **settings_env}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def data_dir() -> Path:
    return ROOT / "data"
