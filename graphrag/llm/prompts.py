"""Prompt templates: one YAML file per prompt in `prompt_templates/`, checked when loaded.

A file declares its `inputs` and a `system` and/or `user` template written with `$name`
placeholders (`string.Template` syntax: `$$` is a literal dollar; JSON braces need no escaping).
Optional `fragments` are smaller named templates, each with its own `inputs`, that code appends
when a value is present (a KB's custom instructions, its relation labels). Loading fails when a
template uses a placeholder it does not declare or declares one it never uses; rendering fails
on a missing or unexpected value. Loaded templates are cached for the life of the process.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from string import Template

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from graphrag.errors import PromptRenderError, PromptTemplateError
from graphrag.llm.messages import ChatMessage
from graphrag.settings import project_root
from graphrag.value_model import ValueModel

__all__ = [
    "DEFAULT_TEMPLATES_DIR",
    "PromptFragment",
    "PromptTemplate",
    "RenderedPrompt",
    "load_prompt",
    "templates_dir",
]

DEFAULT_TEMPLATES_DIR = Path("prompt_templates")
_NAME = re.compile(r"[a-z][a-z0-9_]*")


def _placeholders(text: str) -> set[str]:
    template = Template(text)
    if not template.is_valid():
        raise ValueError("a `$` is neither a placeholder nor escaped as `$$`")
    return set(template.get_identifiers())


def _substitute(text: str, values: dict[str, str], declared: list[str], what: str) -> str:
    missing = sorted(set(declared) - values.keys())
    extra = sorted(values.keys() - set(declared))
    if missing or extra:
        raise PromptRenderError(
            f"prompt {what}: missing values {missing}, unexpected values {extra}",
            missing=missing,
            extra=extra,
        )
    return Template(text).substitute(values)


class PromptFragment(BaseModel):
    """A named piece of prompt text with its own placeholders."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    inputs: list[str] = Field(default_factory=list)
    text: str

    @model_validator(mode="after")
    def _inputs_match(self) -> PromptFragment:
        used = _placeholders(self.text)
        if used != set(self.inputs):
            raise ValueError(f"fragment uses {sorted(used)} but declares {sorted(self.inputs)}")
        return self


class RenderedPrompt(ValueModel):
    """A template with its values filled in."""

    system: str | None
    user: str | None

    def messages(self) -> list[ChatMessage]:
        """The system message (if any) followed by the user message (if any)."""
        pairs = (("system", self.system), ("user", self.user))
        return [ChatMessage(role=role, content=text) for role, text in pairs if text is not None]


class PromptTemplate(BaseModel):
    """A prompt read from `<name>.yaml`; its placeholders agree with its declared `inputs`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    inputs: list[str] = Field(default_factory=list)
    system: str | None = None
    user: str | None = None
    fragments: dict[str, PromptFragment] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _inputs_match(self) -> PromptTemplate:
        if self.system is None and self.user is None:
            raise ValueError("a prompt needs a `system` or a `user` template")
        if len(set(self.inputs)) != len(self.inputs):
            raise ValueError("`inputs` lists a name twice")
        used: set[str] = set()
        for text in (self.system, self.user):
            if text is not None:
                used |= _placeholders(text)
        if used != set(self.inputs):
            raise ValueError(f"templates use {sorted(used)} but declare {sorted(self.inputs)}")
        return self

    def render(self, **values: str) -> RenderedPrompt:
        """Fill every declared input; raise `PromptRenderError` on a missing or extra value."""
        system = self._fill(self.system, values)
        return RenderedPrompt(system=system, user=self._fill(self.user, values))

    def _fill(self, text: str | None, values: dict[str, str]) -> str | None:
        if text is None:
            return None
        return _substitute(text, values, self.inputs, self.name)

    def render_fragment(self, fragment: str, **values: str) -> str:
        """Fill the named fragment; raise `PromptRenderError` if unknown or misfilled."""
        piece = self.fragments.get(fragment)
        if piece is None:
            raise PromptRenderError(f"prompt {self.name} has no fragment {fragment!r}")
        return _substitute(piece.text, values, piece.inputs, f"{self.name}.{fragment}")


def templates_dir(configured: Path | None = None) -> Path:
    """The templates folder: `configured` (relative to the project root) or the default."""
    folder = configured if configured is not None else DEFAULT_TEMPLATES_DIR
    return folder if folder.is_absolute() else project_root() / folder


def load_prompt(name: str, directory: Path | None = None) -> PromptTemplate:
    """The template `<directory>/<name>.yaml`, checked and cached per process.

    `directory` defaults to the project's `prompt_templates/`; a relative one is taken from the
    project root. Raises `PromptTemplateError` if the name, file or template is invalid.
    """
    if not _NAME.fullmatch(name):
        raise PromptTemplateError(f"invalid prompt name {name!r}")
    return _load(name, templates_dir(directory).resolve())


@cache
def _load(name: str, directory: Path) -> PromptTemplate:
    path = directory / f"{name}.yaml"
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise PromptTemplateError(f"prompt {name} cannot be read: {error}") from error
    except yaml.YAMLError as error:
        raise PromptTemplateError(f"prompt {name} is not valid YAML: {error}") from error
    if not isinstance(raw, dict):
        raise PromptTemplateError(f"prompt {name} must be a YAML mapping")
    try:
        return PromptTemplate.model_validate({**raw, "name": name})
    except ValidationError as error:
        raise PromptTemplateError(f"prompt {name} is invalid: {error}") from error
