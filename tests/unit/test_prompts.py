"""Prompt templates: loading checks placeholders against `inputs`, rendering checks values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrag.errors import GraphragError, PromptRenderError, PromptTemplateError
from graphrag.llm.messages import ChatMessage
from graphrag.llm.prompts import load_prompt, templates_dir
from graphrag.settings import get_settings, project_root

pytestmark = pytest.mark.unit

SHIPPED = ["extract_graph", "extract_entity", "fabri_text", "fabri_tag"]


def write(folder: Path, name: str, text: str) -> Path:
    (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_templates_load_and_render(name: str) -> None:
    template = load_prompt(name)
    values = {key: f"<{key}>" for key in template.inputs}

    rendered = template.render(**values)

    text = (rendered.system or "") + (rendered.user or "")
    assert template.inputs
    assert all(f"<{key}>" in text for key in template.inputs)
    assert "$" not in text


def test_extract_graph_keeps_json_braces_and_offers_its_fragments() -> None:
    template = load_prompt("extract_graph")

    system = template.render(text="x").system or ""

    example = next(line for line in system.splitlines() if line.startswith('{"nodes"'))
    assert set(json.loads(example)) == {"nodes", "relations"}
    assert set(template.fragments) == {"custom_instructions", "tags_strict", "tags_preferred"}
    assert template.render_fragment("tags_strict", tags="- works for").endswith("- works for\n")


def test_templates_dir_from_settings_resolves_against_the_project_root() -> None:
    configured = get_settings().extraction.prompt_templates_dir

    assert templates_dir(configured) == project_root() / "prompt_templates"
    assert templates_dir(None) == project_root() / "prompt_templates"
    assert load_prompt("fabri_tag", configured) is load_prompt("fabri_tag")


def test_loading_is_cached_per_process(tmp_path: Path) -> None:
    write(tmp_path, "greet", "inputs: [who]\nuser: Hello $who\n")
    first = load_prompt("greet", tmp_path)

    write(tmp_path, "greet", "inputs: []\nuser: changed\n")

    assert load_prompt("greet", tmp_path) is first


def test_render_gives_messages_and_keeps_values_verbatim(tmp_path: Path) -> None:
    write(
        tmp_path, "ask", "inputs: [q]\nsystem: |\n  Reply {\"a\": 1}, costs $$5.\nuser: 'Q: $q'\n"
    )

    rendered = load_prompt("ask", tmp_path).render(q="why $x {y}?")

    assert rendered.messages() == [
        ChatMessage(role="system", content='Reply {"a": 1}, costs $5.\n'),
        ChatMessage(role="user", content="Q: why $x {y}?"),
    ]


@pytest.mark.parametrize(
    ("values", "missing", "extra"),
    [
        ({}, ["q"], []),
        ({"q": "a", "other": "b"}, [], ["other"]),
        ({"other": "b"}, ["q"], ["other"]),
    ],
)
def test_render_rejects_missing_or_extra_values(
    tmp_path: Path, values: dict[str, str], missing: list[str], extra: list[str]
) -> None:
    template = load_prompt("ask", write(tmp_path, "ask", "inputs: [q]\nuser: $q\n"))

    with pytest.raises(PromptRenderError) as caught:
        template.render(**values)

    assert caught.value.details == {"missing": missing, "extra": extra}
    assert isinstance(caught.value, GraphragError)


def test_fragment_rejects_unknown_name_and_wrong_values(tmp_path: Path) -> None:
    text = "inputs: []\nuser: hi\nfragments:\n  tags:\n    inputs: [tags]\n    text: 'T: $tags'\n"
    template = load_prompt("frag", write(tmp_path, "frag", text))

    assert template.render_fragment("tags", tags="a") == "T: a"
    with pytest.raises(PromptRenderError):
        template.render_fragment("tags")
    with pytest.raises(PromptRenderError):
        template.render_fragment("nope", tags="a")


@pytest.mark.parametrize(
    "text",
    [
        "inputs: [a]\nuser: no placeholder\n",  # declared, never used
        "inputs: []\nuser: uses $b\n",  # used, not declared
        "inputs: [a, a]\nuser: $a\n",  # declared twice
        "inputs: [a]\nuser: costs $5 $a\n",  # stray dollar
        "inputs: []\n",  # neither system nor user
        "inputs: []\nuser: hi\nunknown_key: 1\n",
        "inputs: []\nuser: hi\nfragments:\n  f:\n    inputs: []\n    text: $x\n",
        "- just\n- a list\n",
        "inputs: [a\nuser: broken yaml\n",
    ],
)
def test_invalid_templates_are_refused_at_load(tmp_path: Path, text: str) -> None:
    with pytest.raises(PromptTemplateError):
        load_prompt("bad", write(tmp_path, "bad", text))


@pytest.mark.parametrize("name", ["missing", "../config/settings", "Extract", ""])
def test_missing_files_and_unsafe_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(PromptTemplateError):
        load_prompt(name, tmp_path)
