"""Loading the settings: environment names reach nested groups; refusals name the setting."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from graphrag.settings import SCHEMA_EMBEDDING_DIM, Settings

pytestmark = pytest.mark.unit


def test_an_environment_variable_reaches_a_group_nested_in_a_section(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shipped = Settings()
    monkeypatch.setenv("SEARCH_GRAPH_MAX_KEYS", str(shipped.search.graph.max_keys + 1))
    monkeypatch.setenv("SEARCH_GRAPH_RANKER", "entity_overlap")
    monkeypatch.setenv("MEMORY_IMPORTANCE_QA", "0.125")
    loaded = Settings()
    assert loaded.search.graph.max_keys == shipped.search.graph.max_keys + 1
    assert loaded.search.graph.ranker == "entity_overlap"
    assert loaded.search.graph.hops == shipped.search.graph.hops  # the rest from the YAML
    assert loaded.memory.importance.qa == 0.125
    assert loaded.memory.importance.note == shipped.memory.importance.note


def test_a_field_of_the_section_wins_over_a_nested_group_of_that_prefix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # memory.graph_k is a field of the section; memory has no `graph` group to move it into.
    monkeypatch.setenv("MEMORY_GRAPH_K", "2")
    monkeypatch.setenv("SEARCH_TOP_K", "9")
    loaded = Settings()
    assert (loaded.memory.graph_k, loaded.search.top_k) == (2, 9)


@pytest.mark.parametrize(
    ("variable", "value", "where"),
    [
        ("SEARCH_GRAPH_NO_SUCH_CAP", "1", r"search\.graph\.no_such_cap"),
        ("SEARCH_GRAPH_MAX_KEYS", "many", r"search\.graph\.max_keys"),
        ("SEARCH_GRAPH_MAX_KEYS", "0", r"search\.graph\.max_keys"),
    ],
)
def test_a_bad_nested_variable_is_refused_by_its_full_name(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, where: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError, match=where):
        Settings()


def test_the_old_flat_names_of_the_graph_settings_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValidationError, match="graph_max_keys"):
        Settings(search={**Settings().search.model_dump(), "graph_max_keys": 5})


def test_an_embedding_width_other_than_the_schemas_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EMBEDDING_DIM", "768")
    with pytest.raises(ValidationError, match=r"embedding\.dim .* is 768 .* needs a migration"):
        Settings()
    monkeypatch.setenv("EMBEDDING_DIM", "384")
    assert Settings().embedding.dim == SCHEMA_EMBEDDING_DIM == 384
