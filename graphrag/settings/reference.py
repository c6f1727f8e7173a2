"""The settings reference (`docs/settings-reference.md`), written from `config/settings.yaml`.

Values come from the parsed YAML; the meaning of each value comes from its comments (the one on
its line, the lines continuing it, and a block of comment lines just above it). Run
`python -m graphrag.settings.reference > docs/settings-reference.md` after changing the YAML; a
unit test fails while the page and the YAML disagree.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SETTINGS_YAML = Path(__file__).resolve().parents[2] / "config" / "settings.yaml"
MAX_VALUE_CHARS = 60  # a longer default (a rule table) is named, not printed

HEADER = """# Settings reference

Written from `config/settings.yaml` by `python -m graphrag.settings.reference`; do not edit by
hand. Every value can be overridden by an environment variable: the path in capitals, its parts
joined by `_` (`search.graph.max_keys` is `SEARCH_GRAPH_MAX_KEYS`); see
[configuration.md](configuration.md).
"""


@dataclass
class _Entry:
    """One key of the YAML: its dotted path and the comment lines that explain it."""

    path: tuple[str, ...]
    comment: list[str] = field(default_factory=list)


def _split_comment(text: str) -> tuple[str, str]:
    """Split `value  # comment` at the first `#` outside quotes that follows a space."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or text[index - 1] == " "):
            return text[:index].rstrip(), text[index + 1 :].strip()
    return text.rstrip(), ""


def _key_of(line: str) -> tuple[int, str, str] | None:
    """(indent, key, rest) of a `key: rest` line, or None for any other line."""
    stripped = line.lstrip(" ")
    name, colon, rest = stripped.partition(":")
    if not colon or not name or not all(c.isalnum() or c == "_" for c in name):
        return None
    return len(line) - len(stripped), name, rest


def _entries(text: str, tree: dict[str, Any]) -> list[_Entry]:
    """Every mapping key of the YAML with its comments, in file order."""
    entries: list[_Entry] = []
    stack: list[tuple[int, str]] = []
    pending: list[str] = []
    last: _Entry | None = None
    last_indent = -1
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            pending, last = [], None
            continue
        if stripped.startswith("#"):
            indent = len(line) - len(line.lstrip(" "))
            if last is not None and indent > last_indent:
                last.comment.append(stripped.lstrip("#").strip())
            else:
                pending.append(stripped.lstrip("#").strip())
                last = None
            continue
        parsed = _key_of(line)
        if parsed is None:
            continue
        indent, name, rest = parsed
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = (*(key for _, key in stack), name)
        if not _is_mapping_path(tree, path):
            continue
        stack.append((indent, name))
        _, comment = _split_comment(rest)
        entry = _Entry(path, [*pending, comment] if comment else list(pending))
        entries.append(entry)
        pending, last, last_indent = [], entry, indent
    return entries


def _is_mapping_path(tree: dict[str, Any], path: tuple[str, ...]) -> bool:
    """Whether `path` names a key reached through mappings only (not inside a list)."""
    node: Any = tree
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _value_at(tree: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = tree
    for part in path:
        node = node[part]
    return node


def _shown(value: Any) -> str:
    """A default as written in the table (JSON spelling, long ones named)."""
    if isinstance(value, str):
        text = value if value else '""'
    else:
        text = json.dumps(value, ensure_ascii=False)
    if len(text) > MAX_VALUE_CHARS:
        kind = f"{len(value)} entries" if isinstance(value, list | dict) else "long text"
        return f"({kind}, see config/settings.yaml)"
    return f"`{text}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def environment_name(path: tuple[str, ...]) -> str:
    """The environment variable that overrides the value at `path`."""
    return "_".join(path).upper()


def render(text: str) -> str:
    """The Markdown reference of the settings YAML `text`."""
    tree = yaml.safe_load(text)
    lines_in = text.splitlines()
    opening = 0
    while opening < len(lines_in) and lines_in[opening].startswith("#"):
        opening += 1
    entries = _entries("\n".join(lines_in[opening:]), tree)
    intro = " ".join(line.lstrip("#").strip() for line in lines_in[:opening])
    lines = [HEADER, intro, "", "## Top level", ""]
    rows_open = False
    for entry in entries:
        value = _value_at(tree, entry.path)
        meaning = _cell(" ".join(entry.comment))
        if len(entry.path) == 1 and isinstance(value, dict):
            lines += ["", f"## `{entry.path[0]}`", ""]
            if meaning:
                lines += [meaning, ""]
            rows_open = False
            continue
        if isinstance(value, dict):
            if meaning:
                lines += ["", f"`{'.'.join(entry.path)}`: {meaning}", ""]
                rows_open = False
            continue
        if not rows_open:
            lines += ["| setting | variable | default | meaning |", "|---|---|---|---|"]
            rows_open = True
        dotted, variable = ".".join(entry.path), environment_name(entry.path)
        lines.append(f"| `{dotted}` | `{variable}` | {_cell(_shown(value))} | {meaning} |")
    return "\n".join(lines).replace("\n\n\n", "\n\n") + "\n"


def main() -> None:
    """Print the reference of the project's settings YAML."""
    sys.stdout.write(render(SETTINGS_YAML.read_text(encoding="utf-8")))


if __name__ == "__main__":
    main()
