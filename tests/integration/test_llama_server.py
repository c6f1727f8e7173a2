"""A real llama.cpp server (llama-cpp-python + Gemma 3 270M) answers graph extraction as JSON.

The server is started through deploy/local/llama_server.sh on a free port with its own home
folder (so a development server on the default port is left alone) and stopped at the end.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.llama]

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "deploy" / "local" / "llama_server.sh"
GGUF_HELPER = REPO_ROOT / "deploy" / "local" / "gguf_path.py"
MODELS_DIR = REPO_ROOT / "data" / "llama" / "models"  # the assembled GGUF is reused across runs
SCRIPT_TIMEOUT_S = 300
REQUEST_TIMEOUT_S = 120.0
TEMPERATURE = 0.3
MAX_TOKENS = 512

GRAPH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "nodes": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "attributes": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["name", "attributes"],
            },
        },
        "relations": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "node1": {"type": "string"},
                    "node2": {"type": "string"},
                    "type": {"type": "string"},
                },
                "required": ["node1", "node2", "type"],
            },
        },
    },
    "required": ["nodes", "relations"],
}

INSTRUCTIONS = (
    "Read the passage and list its entities and the relations between them. Answer with one "
    'JSON object: {"nodes": [{"name": "...", "attributes": ["..."]}], '
    '"relations": [{"node1": "...", "node2": "...", "type": "..."}]}.'
)
PASSAGE = (
    "Marie Curie was a physicist born in Warsaw. She worked at the University of Paris, "
    "where she shared the 1903 Nobel Prize in Physics with Pierre Curie."
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(action: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["bash", str(SCRIPT), action],
        env=env,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"llama_server.sh {action} failed:\n{done.stderr}"
    return done.stdout.strip()


@pytest.fixture(scope="module")
def llama_base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """OpenAI base URL of a llama.cpp server started for this module."""
    model = subprocess.run(
        [str(REPO_ROOT / ".venv" / "bin" / "python"), str(GGUF_HELPER), "--dir", str(MODELS_DIR)],
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT_S,
        check=True,
    ).stdout.strip()
    env = {
        **os.environ,
        "LLAMA_HOME_DIR": str(tmp_path_factory.mktemp("llama")),
        "LLAMA_PORT": str(_free_port()),
        "LLAMA_MODEL": model,
    }
    base_url = _run("start", env)
    try:
        assert _run("start", env) == base_url  # a second start finds the running server
        yield base_url
    finally:
        _run("stop", env)


def test_extracts_graph_json_under_a_schema(llama_base_url: str) -> None:
    with openai.OpenAI(
        base_url=llama_base_url, api_key="local", timeout=REQUEST_TIMEOUT_S, max_retries=0
    ) as client:
        answer = client.chat.completions.create(
            model="gemma3-270m",
            # The `gemma` chat format drops system messages: instructions go in the user turn.
            messages=[{"role": "user", "content": f"{INSTRUCTIONS}\n\nPassage:\n{PASSAGE}"}],
            # llama-cpp-python takes the schema inside a json_object response_format (it answers
            # OpenAI's `json_schema` with a 500); extra_body sends it as is.
            extra_body={"response_format": {"type": "json_object", "schema": GRAPH_SCHEMA}},
            temperature=TEMPERATURE,
            max_tokens=MAX_TOKENS,
        )
    content = answer.choices[0].message.content
    assert content is not None
    graph = json.loads(content)
    assert isinstance(graph["nodes"], list)
    assert isinstance(graph["relations"], list)
    for node in graph["nodes"]:
        assert isinstance(node["name"], str)
        assert all(isinstance(a, str) for a in node["attributes"])
    for relation in graph["relations"]:
        assert all(isinstance(relation[key], str) for key in ("node1", "node2", "type"))
