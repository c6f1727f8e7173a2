"""A real llama.cpp server (llama-cpp-python + a packaged model) for the tests that need one.

The fast tests run the Gemma 3 270M (`LLAMA_MODEL_NAME`); the demo's test runs the default
Qwen2.5-Coder 1.5B (`DEMO_MODEL_NAME`).

Started through deploy/local/llama_server.sh on a free port with its own home folder, so a
development server on the default port is left alone.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.http_server import free_port
from tests.support.services import ROOT

__all__ = ["DEMO_MODEL_NAME", "LLAMA_MODEL_NAME", "llama_server"]

SCRIPT = ROOT / "deploy" / "local" / "llama_server.sh"
GGUF_HELPER = ROOT / "deploy" / "local" / "gguf_path.py"
MODELS_DIR = ROOT / "data" / "llama" / "models"  # the assembled GGUF is reused across runs
SCRIPT_TIMEOUT_S = 300
LLAMA_MODEL_NAME = "gemma3-270m"
DEMO_MODEL_NAME = "qwen2.5-1.5b"


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


@contextmanager
def llama_server(home: Path, name: str = LLAMA_MODEL_NAME) -> Iterator[str]:
    """Start the server on packaged model `name`, yield its OpenAI base URL, stop it."""
    python = str(ROOT / ".venv" / "bin" / "python")
    model = subprocess.run(
        [python, str(GGUF_HELPER), "--dir", str(MODELS_DIR), "--model", name],
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT_S,
        check=True,
    ).stdout.strip()
    env = {
        **os.environ,
        "LLAMA_HOME_DIR": str(home),
        "LLAMA_PORT": str(free_port()),
        "LLAMA_MODEL": model,
        "LLAMA_LOCAL_MODEL": name,
    }
    base_url = _run("start", env)
    try:
        assert _run("start", env) == base_url  # a second start finds the running server
        yield base_url
    finally:
        _run("stop", env)
