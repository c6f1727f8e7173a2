"""The layer contract of `graphrag/`, read from the source's import statements (AST, no import).

Each package of the core sits on one layer and imports only its own package and the layers below
it; packages that share a layer do not import each other. The core never imports the web or
task frameworks, nor the `api/` and `workers/` that sit on top of it; only the CLI, which starts
those processes, may.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "graphrag"

# Bottom up. A name is a sub-package of graphrag/ or a top-level module (without `.py`).
LAYERS: list[set[str]] = [
    {"settings", "errors", "metrics", "task_queue", "text_input", "text_scan"},
    {"db"},
    {"auth", "tenancy"},
    {"llm"},
    {"graph"},  # stores, Cypher, the graph data models
    {"extraction"},  # pure: prompts, tolerant parser, a base's extraction config
    {"kb"},  # what a knowledge base is (chunking, indexing, switches) and its rows
    {"search"},
    {"ingest"},
    {"chat", "memory"},
    {"faces", "system_status"},
    {"cli"},
]
# Top-level modules that are parts of one unit above.
PART_OF = {
    "settings_base": "settings",
    "settings_memory": "settings",
    "cli_chat": "cli",
    "cli_ingest": "cli",
    "cli_keys": "cli",
    "cli_mcp": "cli",
    "worker_liveness": "system_status",
}
# The CLI starts the API and the workers; nothing else in the core may reach them.
FRAMEWORKS = {"fastapi", "starlette", "celery", "kombu", "api", "workers", "uvicorn"}

LAYER_OF = {name: index for index, layer in enumerate(LAYERS) for name in layer}


def _module_name(path: Path, repo: Path = ROOT) -> str:
    parts = path.relative_to(repo).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, repo: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in the file, relative ones resolved."""
    module = _module_name(path, repo)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, *([module] if module else [])])
            # A name taken from a package may be a sub-module (`from graphrag import ingest`,
            # `from .. import ingest`): each imported name counts, not only where it comes from.
            for alias in node.names:
                yield node.lineno, f"{module}.{alias.name}"


def _unit(module: str) -> str | None:
    """The layered unit a `graphrag.*` module belongs to (its sub-package or top module)."""
    parts = module.split(".")
    if parts[0] != "graphrag" or len(parts) < 2:
        return None
    return PART_OF.get(parts[1], parts[1])


def layer_violations(root: Path = CORE) -> list[str]:
    """Every import in `root` that breaks the contract, as `file:line: reason`."""
    repo = root.parent
    problems: list[str] = []
    for path in sorted(root.rglob("*.py")):
        source = _unit(_module_name(path, repo))
        if source is None:
            continue
        where = f"{path.relative_to(repo)}"
        if source not in LAYER_OF:
            problems.append(f"{where}: graphrag.{source} has no layer in LAYERS")
            continue
        for line, target in _imports(path, repo):
            top = target.split(".")[0]
            if top in FRAMEWORKS and source != "cli":
                problems.append(f"{where}:{line}: the core imports {target}")
                continue
            unit = _unit(target)
            if unit is None or unit == source:
                continue
            if unit not in LAYER_OF:
                problems.append(f"{where}:{line}: graphrag.{unit} has no layer in LAYERS")
            elif LAYER_OF[unit] > LAYER_OF[source]:
                problems.append(f"{where}:{line}: {source} imports {target}, a layer above it")
            elif LAYER_OF[unit] == LAYER_OF[source]:
                problems.append(f"{where}:{line}: {source} imports {target} on its own layer")
    return problems


# extraction is pure: model output in, graph data out; no database, no store, no driver.
PURE_EXTRACTION_REFUSES = ("sqlalchemy", "neo4j", "redis", "graphrag.db", "graphrag.graph.")
PURE_EXTRACTION_MAY = ("graphrag.graph.models",)


def impure_extraction_imports(root: Path = CORE) -> list[str]:
    """Imports that would tie extraction to a database or a store, as `file:line: module`."""
    found: list[str] = []
    for path in sorted((root / "extraction").rglob("*.py")):
        for line, target in _imports(path, root.parent):
            if target.startswith(PURE_EXTRACTION_MAY):
                continue
            if target.startswith(PURE_EXTRACTION_REFUSES) or target == "graphrag.graph":
                found.append(f"{path.relative_to(root.parent)}:{line}: {target}")
    return found


def test_extraction_stays_pure() -> None:
    assert impure_extraction_imports() == []


def test_every_core_package_has_a_layer() -> None:
    found = (_unit(_module_name(path)) for path in CORE.rglob("*.py"))
    units = {unit for unit in found if unit is not None}
    assert units <= set(LAYER_OF), sorted(units - set(LAYER_OF))
    assert set(LAYER_OF) - units == set(), "a layer names a package that does not exist"


def test_no_import_goes_up_a_layer_or_into_a_framework() -> None:
    assert layer_violations() == []


@pytest.mark.parametrize(
    ("path", "line", "reason"),
    [
        ("graph/upward.py", "from graphrag.kb.service import get_kb_row\n", "a layer above"),
        ("extraction/upward.py", "from graphrag.graph import models\n", None),
        ("db/upward.py", "from ..ingest import processing\n", "a layer above"),
        ("db/bare.py", "from graphrag import ingest\n", "a layer above"),
        ("db/relative.py", "from .. import ingest\n", "a layer above"),
        ("chat/bare_sibling.py", "from graphrag import memory\n", "on its own layer"),
        ("kb/own.py", "from . import service\n", None),
        ("chat/sibling.py", "import graphrag.memory.recall\n", "on its own layer"),
        ("search/web.py", "from fastapi import APIRouter\n", "the core imports fastapi"),
        ("ingest/tasks.py", "from workers.celery_app import app\n", "the core imports workers"),
        ("cli_more.py", "import celery\n", "has no layer"),
    ],
)
def test_the_check_catches_an_upward_import(
    tmp_path: Path, path: str, line: str, reason: str | None
) -> None:
    """The same check over a copy of the core with one planted import: it must fail on it."""
    fake_core = tmp_path / "graphrag"
    fake_core.mkdir(parents=True)
    for source in CORE.rglob("*.py"):
        target = fake_core / source.relative_to(CORE)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    (fake_core / path).write_text(line, encoding="utf-8")
    problems = layer_violations(fake_core)
    if reason is None:
        assert problems == []
    else:
        assert len(problems) == 1 and reason in problems[0], problems


@pytest.mark.parametrize(
    ("line", "caught"),
    [
        ("from graphrag.graph import models\n", False),
        ("from graphrag import db\n", True),
        ("from ..graph import neo4j_store\n", True),
        ("from graphrag.graph import neo4j_tx\n", True),
    ],
)
def test_the_purity_check_reads_what_is_imported(tmp_path: Path, line: str, caught: bool) -> None:
    """A planted import in extraction/: a store or the database is caught however it is named."""
    extraction = tmp_path / "graphrag" / "extraction"
    extraction.mkdir(parents=True)
    (extraction / "planted.py").write_text(line, encoding="utf-8")
    assert bool(impure_extraction_imports(tmp_path / "graphrag")) is caught
