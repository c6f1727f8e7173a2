"""The README is a short map and docs/ holds the reference: both must stay true to the code.

The settings reference is written from `config/settings.yaml`; every default quoted in a limits
table and every variable of the configuration page must be one the YAML has; every relative
link of the README and docs/ must reach a file (and a heading, when it names one).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from graphrag.settings.reference import SETTINGS_YAML, environment_name, render

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README_MAX_LINES = 200
TWO_COMMANDS = ["bash deploy/local/demo.sh", "bash deploy/local/test.sh"]
LINK = re.compile(r"\]\(([^)\s]+)\)")
TABLE_ROW_SETTING = re.compile(r"^\| `([a-z0-9_.]+)` \| `([^`|]*)` \|")


def _settings() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(SETTINGS_YAML.read_text(encoding="utf-8"))
    return loaded


def _leaves(tree: dict[str, Any], prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    found: dict[tuple[str, ...], Any] = {}
    for key, value in tree.items():
        path = (*prefix, key)
        if isinstance(value, dict):
            found |= _leaves(value, path)
        else:
            found[path] = value
    return found


def _spelled(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list):
        return json.dumps(value)
    return str(value)


def _slug(heading: str) -> str:
    text = heading.strip().lower()
    kept = "".join(c for c in text if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {_slug(line.lstrip("#")) for line in lines if line.startswith("#")}


def _pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted(DOCS.glob("*.md"))]


def test_settings_reference_is_written_from_the_yaml() -> None:
    written = (DOCS / "settings-reference.md").read_text(encoding="utf-8")
    expected = render(SETTINGS_YAML.read_text(encoding="utf-8"))
    assert written == expected, (
        "docs/settings-reference.md is stale: run "
        "`.venv/bin/python -m graphrag.settings.reference > docs/settings-reference.md`"
    )


def test_settings_reference_lists_every_value() -> None:
    written = (DOCS / "settings-reference.md").read_text(encoding="utf-8")
    for path in _leaves(_settings()):
        assert f"| `{'.'.join(path)}` | `{environment_name(path)}` |" in written


def test_limits_tables_quote_the_yaml_defaults() -> None:
    leaves = {".".join(path): value for path, value in _leaves(_settings()).items()}
    quoted = 0
    for line in (DOCS / "limits.md").read_text(encoding="utf-8").splitlines():
        row = TABLE_ROW_SETTING.match(line)
        if row is None:
            continue
        name, default = row.groups()
        assert name in leaves, f"docs/limits.md names `{name}`, which settings.yaml lacks"
        assert default == _spelled(leaves[name]), (
            f"docs/limits.md gives `{name}` the default {default!r}; settings.yaml has "
            f"{_spelled(leaves[name])!r}"
        )
        quoted += 1
    assert quoted > 0


def test_configuration_page_names_real_variables() -> None:
    variables = {environment_name(path) for path in _leaves(_settings())}
    variables |= {environment_name(path) for path in _sections(_settings())}
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    named = [
        cell
        for line in page.splitlines()
        if line.startswith("| `")
        for cell in re.findall(r"`([A-Z][A-Z0-9_]+)`", line.split("|")[1])
    ]
    assert named
    unknown = sorted(set(named) - variables)
    assert not unknown, f"docs/configuration.md names variables settings.yaml lacks: {unknown}"


def _sections(tree: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for key, value in tree.items():
        if isinstance(value, dict):
            found += [(*prefix, key), *_sections(value, (*prefix, key))]
    return found


def test_readme_is_a_short_map_opening_with_the_two_commands() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < README_MAX_LINES
    block_start = lines.index("```bash")
    block = lines[block_start + 1 : lines.index("```", block_start)]
    assert [line.split("#")[0].strip() for line in block] == TWO_COMMANDS
    assert all(not line.startswith("## ") for line in lines[:block_start])


@pytest.mark.parametrize("page", _pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file_part, _, anchor = target.partition("#")
        linked = (page.parent / file_part).resolve() if file_part else page
        assert linked.exists(), f"{page.name} links to {target}, which does not exist"
        if anchor and linked.suffix == ".md":
            assert anchor in _anchors(linked), f"{page.name} links to a missing heading: {target}"
