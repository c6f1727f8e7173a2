"""`graphrag eval` from the shell: a set uploaded, two runs followed to their end by the real
worker, shown and compared; a bad set and another base's run end the command with the reason."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb, wait_terminal
from tests.support.services import ROOT, worker_environment
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration

CLI_TIMEOUT_S = 180
_ID = re.compile(r"(?:set|run) ([0-9a-f-]{36})")


def _eval(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli.main", "eval", *args],
        cwd=ROOT,
        env={**worker_environment(env), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def _id(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    found = _ID.search(result.stdout)
    assert found, result.stdout
    return found.group(1)


def test_upload_run_show_compare(
    tmp_path: Path,
    settings_env: dict[str, str],
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    fresh_scripted_llm.set_rules([], default={"content": "[]"})
    kb = create_kb(http)
    for title, text in (("lyon", "Lyon lies on the Rhone."), ("nantes", "Nantes is on the Loire.")):
        doc = http.post(
            f"/api/v1/knowledge-bases/{kb['id']}/knowledge/text",
            json={"title": title, "content": f"{text} {uuid.uuid4()}"},
        )
        assert wait_terminal(http, doc.json()["id"])["parse_status"] == "completed"
    questions = tmp_path / "cities.jsonl"
    questions.write_text(
        json.dumps({"question": "Which river flows through Lyon?", "gold": ["lyon"], "hops": 1})
        + "\n"
        + json.dumps({"question": "Which river flows by Nantes?", "gold": ["nantes"], "hops": 1})
    )
    set_id = _id(_eval(settings_env, "upload", str(questions), "--kb", kb["id"]))

    one = _eval(settings_env, "run", "--kb", kb["id"], "--set", set_id, "--top-k", "1")
    two = _eval(settings_env, "run", "--kb", kb["id"], "--set", set_id, "--no-wait")
    first = _id(one)
    assert "r_at_5" in one.stdout and "succeeded" in one.stdout
    second = _id(two)
    assert "r_at_5" not in two.stdout  # not followed
    deadline = time.monotonic() + CLI_TIMEOUT_S
    shown = _eval(settings_env, "show", second, "--kb", kb["id"])
    while "queued" in shown.stdout or "running" in shown.stdout:
        assert time.monotonic() < deadline, shown.stdout
        shown = _eval(settings_env, "show", second, "--kb", kb["id"])
    assert shown.returncode == 0 and "succeeded" in shown.stdout, shown.stdout + shown.stderr
    compared = _eval(settings_env, "compare", first, second, "--kb", kb["id"])
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert "b - a" in compared.stdout and "changed questions" in compared.stdout

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "x", "gold": ["atlantis"]}')
    refused = _eval(settings_env, "upload", str(bad), "--kb", kb["id"])
    assert refused.returncode == 1 and "eval_set_invalid" in refused.stderr
    other = create_kb(http)
    missing = _eval(settings_env, "show", first, "--kb", other["id"])
    assert missing.returncode == 1 and "not found" in missing.stderr
