"""The layer contract, read from the source's import statements (AST, no import).

The layers are written once, in `docs/layers.toml`. Each package of the core (`graphrag/`) sits
on one layer and imports only its own package and the layers below it; packages that share a
layer do not import each other. The core never imports the web or task frameworks, nor the
packages on top of it (`api/`, `workers/`, `cli/`); each of those imports the core and only the
parts of the others that the file names. docs/architecture.md shows the same tables.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.packaging import wheel_packages

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "graphrag"
LAYERS_FILE = ROOT / "docs" / "layers.toml"
SPEC: dict[str, Any] = tomllib.loads(LAYERS_FILE.read_text(encoding="utf-8"))


def _name(entry: str) -> str:
    """`db/` -> `db`, `errors.py` -> `errors`: a unit as an import names it."""
    return entry.removesuffix("/").removesuffix(".py")


# Bottom up. A name is a sub-package of graphrag/ or a top-level module (without `.py`).
LAYERS: list[set[str]] = [{_name(entry) for entry in layer["packages"]} for layer in SPEC["core"]]
# Top-level modules that are parts of one unit above.
PART_OF = {_name(part): _name(owner) for part, owner in SPEC["parts"].items()}
# The packages on top of the core, each with what it may import of the project.
TOP: dict[str, tuple[str, ...]] = {
    _name(top["package"]): tuple(top["may_import"]) for top in SPEC["top"]
}
PROJECT = {"graphrag", *TOP}
FRAMEWORKS = set(SPEC["core_refuses"]["modules"]) | set(TOP)

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
            if top in FRAMEWORKS:
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


def _allowed(target: str, prefixes: tuple[str, ...]) -> bool:
    return any(target == prefix or target.startswith(f"{prefix}.") for prefix in prefixes)


def top_violations(repo: Path = ROOT) -> list[str]:
    """Every import of a package on top of the core that reaches a part of the project it may
    not (another top package, or a module of it the layers file does not name)."""
    problems: list[str] = []
    for package, may_import in TOP.items():
        for path in sorted((repo / package).rglob("*.py")):
            where = f"{path.relative_to(repo)}"
            for line, target in _imports(path, repo):
                top = target.split(".")[0]
                if top in PROJECT and top != package and not _allowed(target, may_import):
                    problems.append(f"{where}:{line}: {package} imports {target}")
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


def test_no_top_package_imports_what_it_may_not() -> None:
    assert top_violations() == []


@pytest.mark.parametrize(
    ("path", "line", "caught"),
    [
        ("api/planted.py", "from workers.queue import sender_queue\n", False),
        ("api/planted.py", "from workers.celery_app import app\n", True),
        ("api/planted.py", "from workers import celery_app\n", True),
        ("api/planted.py", "import workers\n", True),
        ("api/planted.py", "from cli.main import app\n", True),
        ("api/routers/planted.py", "from ..state import AppState\n", False),
        ("workers/planted.py", "from graphrag.ingest import processing\n", False),
        ("workers/planted.py", "from api.app import create_app\n", True),
        ("workers/planted.py", "from workers.queue import sender_queue\n", False),
        ("cli/planted.py", "from api.app import create_app\n", False),
        ("cli/planted.py", "from workers.celery_app import app\n", False),
    ],
)
def test_the_top_check_catches_a_forbidden_import(
    tmp_path: Path, path: str, line: str, caught: bool
) -> None:
    """One planted file in an otherwise empty project: caught exactly when the layers forbid it."""
    planted = tmp_path / path
    planted.parent.mkdir(parents=True)
    planted.write_text(line, encoding="utf-8")
    problems = top_violations(tmp_path)
    assert len(problems) == int(caught), problems


def test_every_packaged_folder_has_its_place() -> None:
    """The wheel's packages are the core and the packages on top of it, no more, no fewer."""
    assert sorted(wheel_packages()) == sorted(PROJECT)


def _cell(names: list[str]) -> str:
    return ", ".join(f"`{name}`" for name in names)


def layer_tables() -> list[str]:
    """The two layer tables of docs/architecture.md (core, packages on top), as Markdown."""
    core = ["| layer | packages | holds |", "|---|---|---|"]
    for number, layer in enumerate(SPEC["core"], start=1):
        names: list[str] = []
        for entry in layer["packages"]:  # each followed by its parts
            names += [entry, *(part for part, owner in SPEC["parts"].items() if owner == entry)]
        core.append(f"| {number} | {_cell(names)} | {layer['holds']} |")
    top = ["| package | may import | holds |", "|---|---|---|"]
    for entry in SPEC["top"]:
        top.append(f"| `{entry['package']}` | {_cell(entry['may_import'])} | {entry['holds']} |")
    return ["\n".join(core) + "\n", "\n".join(top) + "\n"]


def test_the_architecture_page_shows_the_layers_file() -> None:
    """docs/architecture.md's tables come from `docs/layers.toml`: paste the expected ones."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for table in layer_tables():
        assert table in page, f"docs/architecture.md must show, from docs/layers.toml:\n{table}"
