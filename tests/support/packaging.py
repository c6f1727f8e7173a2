"""What the wheel installs, read from pyproject.toml."""

from __future__ import annotations

import tomllib

from graphrag.settings import project_root


def wheel_packages() -> list[str]:
    """The top-level packages the wheel holds (and so the image must copy)."""
    pyproject = tomllib.loads((project_root() / "pyproject.toml").read_text(encoding="utf-8"))
    packages: list[str] = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    return packages
