"""A real llama.cpp server (llama-cpp-python + Gemma 3 270M) for the tests that need one.

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

__all__ = ["LLAMA_MODEL_NAME", "llama_server"]

SCRIPT = ROOT / "deploy" / "local" / "llama_server.sh"
GGUF_HELPER = ROOT / "deploy" / "local" / "gguf_path.py"
MODELS_DIR = ROOT / "data" / "llama" / "models"  # the assembled GGUF is reused across runs
SCRIPT_TIMEOUT_S = 300
LLAMA_MODEL_NAME = "gemma3-270m"


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
def llama_server(home: Path) -> Iterator[str]:
    """Start the server, yield its OpenAI base URL, stop it."""
    model = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), str(GGUF_HELPER), "--dir", str(MODELS_DIR)],
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
    }
    base_url = _run("start", env)
    try:
        assert _run("start", env) == base_url  # a second start finds the running server
        yield base_url
    finally:
        _run("stop", env)
