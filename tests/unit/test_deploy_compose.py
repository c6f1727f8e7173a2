"""No Docker engine runs here, so the production stack is checked by its structure."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from graphrag.settings import project_root
from tests.support.packaging import wheel_packages
from workers.node_name import default_node_name

pytestmark = pytest.mark.unit

DEPLOY = project_root() / "deploy"
ALLOWLIST = "dbms.security.procedures.allowlist"
# The backend's code, and the benchmarks that load the local server directly.
CYPHER_HOMES = ("graphrag", "bench")
_APOC_NAME = re.compile(r"\bapoc\.[\w.]+")  # a dotted name (a sentence's full stop is stripped)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    return loaded


def test_every_service_is_there(compose: dict[str, Any]) -> None:
    services = set(compose["services"])
    assert {"postgres", "redis", "neo4j", "llama", "api", "flower"} <= services
    workers = {name for name in services if name.startswith("worker-")}
    assert workers == {"worker-docparse", "worker-graph", "worker-memory"}


def test_neo4j_is_526_with_apoc(compose: dict[str, Any]) -> None:
    neo4j = compose["services"]["neo4j"]
    assert neo4j["image"].startswith("neo4j:5.26")
    assert "apoc" in neo4j["environment"]["NEO4J_PLUGINS"]
    assert "apoc.version()" in " ".join(neo4j["healthcheck"]["test"])


def test_postgres_has_pgvector(compose: dict[str, Any]) -> None:
    assert compose["services"]["postgres"]["image"].startswith("pgvector/pgvector")


def test_each_worker_serves_its_queue(compose: dict[str, Any]) -> None:
    for queue in ("docparse", "graph", "memory"):
        command = compose["services"][f"worker-{queue}"]["command"]
        assert command[:2] == ["graphrag", "worker"]
        assert queue in command[command.index("--queues") + 1].split(",")


def test_backend_env_is_wired(compose: dict[str, Any]) -> None:
    for name in ("api", "worker-docparse", "worker-graph", "worker-memory"):
        service = compose["services"][name]
        env = service["environment"]
        assert env["NEO4J_URI"] == "bolt://neo4j:7687"
        assert env["REDIS_URL"].startswith("redis://redis:")
        assert "@postgres:5432/" in env["DATABASE_URL"]
        assert env["LLM_BASE_URL"].startswith("http://llama:")
        assert set(service["depends_on"]) == {"postgres", "redis", "neo4j"}


def test_env_names_match_settings(compose: dict[str, Any]) -> None:
    """Each variable the stack sets is one the settings read (section_field or top level)."""
    from graphrag.settings import Settings

    env = compose["services"]["api"]["environment"]
    fields = Settings.model_fields
    for name in env:
        key = name.lower()
        section, _, rest = key.partition("_")
        if key in fields:
            continue
        assert section in fields, name
        annotation = fields[section].annotation
        assert annotation is not None and rest in annotation.model_fields, name


def test_dockerfile_installs_the_package_and_ocr() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert "tesseract-ocr" in text
    for folder in (*wheel_packages(), "migrations", "config", "prompt_templates"):
        assert f"COPY {folder} ./{folder}" in text
    assert Path(DEPLOY / "docker-compose.yml").exists()


# `${NAME}`, `${NAME:-default}`, `${NAME:?error}` as compose interpolates them (`$$` escapes).
_VARIABLE = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-?])([^}]*))?\}")
_SECRETS = ("FLOWER_USER", "FLOWER_PASSWORD", "POSTGRES_PASSWORD", "NEO4J_PASSWORD", "AUTH_PEPPER")


def _variables() -> dict[str, set[str]]:
    """Each interpolated variable of the compose file and how it is used (`-`, `?` or ``)."""
    found: dict[str, set[str]] = {}
    for match in _VARIABLE.finditer((DEPLOY / "docker-compose.yml").read_text()):
        found.setdefault(match.group(1), set()).add(match.group(2) or "")
    return found


def test_flower_asks_for_basic_auth(compose: dict[str, Any]) -> None:
    env = compose["services"]["flower"]["environment"]
    user, _, password = env["FLOWER_BASIC_AUTH"].partition("}:")
    assert user.startswith("${FLOWER_USER:?")
    assert password.startswith("${FLOWER_PASSWORD:?")


def test_secrets_have_no_default() -> None:
    """The stack refuses to start until every secret is given: none has a shipped value."""
    variables = _variables()
    for name in _SECRETS:
        assert variables.get(name) == {"?"}, f"{name} must be required (${{{name}:?...}})"
    assert not any("PASSWORD" in name and "-" in uses for name, uses in variables.items())


def _dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined."""
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    pairs = [line.split(None, 1) for line in lines if line and not line.startswith("#")]
    return [(pair[0].upper(), pair[1] if len(pair) > 1 else "") for pair in pairs]


def test_backend_image_runs_as_a_non_root_user() -> None:
    instructions = _dockerfile_instructions()
    users = [i for i, (name, _) in enumerate(instructions) if name == "USER"]
    assert users, "the image must switch to an unprivileged USER"
    user = instructions[users[-1]][1].split(":")[0].strip()
    assert user not in {"root", "0"}
    # Everything the containers run comes after the switch.
    commands = [i for i, (name, _) in enumerate(instructions) if name in {"CMD", "ENTRYPOINT"}]
    assert commands and min(commands) > users[-1]
    assert not any(name == "RUN" for name, _ in instructions[users[-1] :])


def test_backend_services_and_flower_have_healthchecks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in ("api", "flower", *(n for n in services if n.startswith("worker-"))):
        check = services[name].get("healthcheck", {})
        assert check.get("test") and not check.get("disable"), f"{name} needs a healthcheck"
    assert "/health" in " ".join(services["api"]["healthcheck"]["test"])
    assert "/healthcheck" in " ".join(services["flower"]["healthcheck"]["test"])


def test_each_worker_check_pings_its_own_node_name(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        if not name.startswith("worker-"):
            continue
        command = service["command"]
        queues = command[command.index("--queues") + 1].split(",")
        node = (
            command[command.index("--name") + 1]
            if "--name" in command
            else default_node_name(queues)
        )
        check = " ".join(service["healthcheck"]["test"])
        assert "inspect ping" in check, name
        assert f'-d "{node.replace("%h", "$${HOSTNAME}")}"' in check, name


def _procedures_called() -> set[str]:
    """Every `apoc.` procedure or function named in the code that sends Cypher."""
    found: set[str] = set()
    for home in CYPHER_HOMES:
        for path in (project_root() / home).rglob("*.py"):
            found |= {name.rstrip(".") for name in _APOC_NAME.findall(path.read_text())}
    return found


def _allowlist(value: str) -> set[str]:
    return {name.strip() for name in value.split(",") if name.strip()}


def _local_allowlist() -> set[str]:
    for line in (DEPLOY / "neo4j" / "neo4j.conf").read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() == ALLOWLIST:
            return _allowlist(value)
    raise AssertionError(f"deploy/neo4j/neo4j.conf sets no {ALLOWLIST}")


def test_apoc_allowlist_covers_every_procedure_the_code_calls(compose: dict[str, Any]) -> None:
    env = compose["services"]["neo4j"]["environment"]
    production = _allowlist(env["NEO4J_dbms_security_procedures_allowlist"])
    called = _procedures_called()
    assert {"apoc.merge.node", "apoc.periodic.iterate"} <= called  # the scan sees the Cypher
    # apoc.version: the health checks of the stack and of the local server.
    assert called | {"apoc.version"} <= production
    assert not any("*" in name for name in production), "no wildcard: only what is called"
    # The tests run on the local server with the same list, so they prove it suffices.
    assert _local_allowlist() == production
    assert "NEO4J_dbms_security_procedures_unrestricted" not in env
