"""Where the settings come from: the YAML file, and environment variables over it.

A variable is the section and the field joined by one underscore, split once: `LLM_BASE_URL`
sets `llm.base_url`. A section's nested model is reached the same way, by its name:
`SEARCH_GRAPH_MAX_KEYS` sets `search.graph.max_keys`, `MEMORY_IMPORTANCE_QA` sets
`memory.importance.qa`. A field of the section itself wins over a nested one of that prefix.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, YamlConfigSettingsSource

from graphrag.settings.base import CONFIG_ENV, project_root

__all__ = ["SectionEnvSource", "yaml_source"]


def yaml_source(settings_cls: type[BaseSettings]) -> YamlConfigSettingsSource:
    """`config/settings.yaml`, or the file `GRAPHRAG_CONFIG` names."""
    path = Path(os.environ.get(CONFIG_ENV, project_root() / "config" / "settings.yaml"))
    return YamlConfigSettingsSource(settings_cls, path)


def _nested_models(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """The fields of `model` that are models themselves, by name."""
    return {
        name: field.annotation
        for name, field in model.model_fields.items()
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
    }


def _nest(values: dict[str, Any], model: type[BaseModel]) -> None:
    """Move each key of `values` that is no field of `model` but names one of its nested models
    (`graph_max_keys` for the model at `graph`) under that model's key, at every depth."""
    nested = _nested_models(model)
    for key in [key for key in values if key not in model.model_fields]:
        owner = next((name for name in nested if key.startswith(f"{name}_")), None)
        inner = values.get(owner) if owner is not None else None
        if owner is not None and (inner is None or isinstance(inner, dict)):
            values.setdefault(owner, {})[key.removeprefix(f"{owner}_")] = values.pop(key)
    for name, sub_model in nested.items():
        if isinstance(values.get(name), dict):
            _nest(values[name], sub_model)


class SectionEnvSource(EnvSettingsSource):
    """The environment, with a section's nested models reached by their names (see above)."""

    def explode_env_vars(
        self, field_name: str, field: FieldInfo, env_vars: Mapping[str, str | None]
    ) -> dict[str, Any]:
        """A section's values from the environment, nested along its models."""
        values = super().explode_env_vars(field_name, field, env_vars)
        section = field.annotation
        if isinstance(section, type) and issubclass(section, BaseModel):
            _nest(values, section)
        return values
