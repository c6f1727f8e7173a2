"""The console's evaluation page in headless Chromium against the real API, worker and services.

A small base with the graph on holds two documents. A user uploads a question set, starts a
graph-off run keeping one passage per question and a graph-on run keeping two, waits for both on
the page, sees bars for both runs and compares them: the changed questions listed are those of
the API's comparison, the first question among them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb, upload, wait_terminal
from tests.support.auth_helpers import bearer, make_key
from tests.support.browser import Browser, chromium, sign_in
from tests.support.graph_helpers import kb_graph_rule
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.browser

RUN_WAIT_S = 180.0
# The graph-off run keeps one passage per question, the graph-on run two: people.txt, second
# for the first question, is found by the second run alone, so the comparison lists it.
TOP_K = {"off": 1, "on": 2}
QUESTION = "Who runs the Zorvath Industries plant in Tromso?"
DOCS = {
    "plant.md": "PLANTDOC. Zorvath Industries runs a plant in Tromso that builds ship engines.",
    "people.txt": "PEOPLEDOC. Elin Brask keeps bees. She directs the Tromso plant.",
}


def _rules() -> list[dict[str, Any]]:
    return [
        {
            "name": "question entities",
            "match": {"user": {"contains": "list the named things"}},
            "reply": {"content": json.dumps(["Zorvath Industries", "Elin Brask"])},
        },
        kb_graph_rule(
            "PLANTDOC",
            [{"name": "Zorvath Industries"}, {"name": "Tromso"}],
            [{"node1": "Zorvath Industries", "node2": "Tromso", "type": "located_in"}],
        ),
        kb_graph_rule(
            "PEOPLEDOC",
            [{"name": "Elin Brask"}, {"name": "Zorvath Industries"}],
            [{"node1": "Elin Brask", "node2": "Zorvath Industries", "type": "runs"}],
        ),
    ]


@pytest.fixture(scope="module")
def owner_key(settings: Settings, session_factory: sessionmaker[Session]) -> str:
    suffix = uuid.uuid4().hex[:8]
    caps = [Capability.READ, Capability.WRITE]
    return make_key(session_factory, settings, f"eval-{suffix}", caps, "eval-console").key


@pytest.fixture(scope="module")
def browser(api_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    with chromium(api_url, tmp_path_factory.mktemp("screenshots")) as b:
        yield b


def ingested_base(http: httpx.Client) -> tuple[str, dict[str, str]]:
    """A graph-on base holding DOCS, every document completed; answers its id and doc ids."""
    kb = create_kb(
        http,
        indexing={"vector": True, "keyword": True, "graph_enabled": True},
        extract_config={"enabled": True, "tags": ["runs", "located_in"]},
    )
    ids = {}
    for name, text in DOCS.items():
        doc = upload(http, kb["id"], name, f"{text}\n\n{uuid.uuid4()}\n".encode(), "text/plain")
        assert doc.status_code == 202, doc.text
        ids[name] = doc.json()["id"]
    for doc_id in ids.values():
        assert wait_terminal(http, doc_id)["parse_status"] == "completed"
    return kb["id"], ids


def question_set(folder: Path) -> Path:
    path = folder / "plants.jsonl"
    lines = [
        {"question": QUESTION, "gold": ["people.txt"], "hops": 2, "tags": ["graph"]},
        {"question": "Where are ship engines built?", "gold": ["plant.md"], "hops": 1},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def start_run(b: Browser, name: str, graph: str) -> None:
    form = "#eval-run-form"
    b.find(f"{form} input[name=name]").send_keys(name)
    Select(b.find(f"{form} select[name=graph]")).select_by_value(graph)
    top_k = b.find(f"{form} input[name=top_k]")
    top_k.clear()
    top_k.send_keys(str(TOP_K[graph]))
    b.click(f"{form} button[type=submit]")
    b.find(f"#eval-run-rows tr[data-run-name='{name}']")


def run_id(b: Browser, name: str) -> str:
    row = b.find(f"#eval-run-rows tr[data-run-name='{name}'][data-status='succeeded']", RUN_WAIT_S)
    return row.get_attribute("data-run-id") or ""


def test_evaluation_page_runs_plots_and_compares(
    browser: Browser,
    api_url: str,
    owner_key: str,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    tmp_path: Path,
) -> None:
    fresh_scripted_llm.set_rules(_rules(), default={"content": "[]"})
    b = browser
    with httpx.Client(base_url=api_url, headers=bearer(owner_key), timeout=30.0) as http:
        kb_id, _ = ingested_base(http)
        sign_in(b, owner_key)
        b.go(f"#/evaluation/{kb_id}")
        b.find("#eval-file").send_keys(str(question_set(tmp_path)))
        b.click("#eval-upload button[type=submit]")
        row = b.find("#eval-set-rows tr[data-set-name]")
        assert "2" in row.text  # two questions read from the file
        start_run(b, "graph off", "off")
        start_run(b, "graph on", "on")
        off, on = run_id(b, "graph off"), run_id(b, "graph on")

        for rid in (off, on):
            bars = b.driver.find_elements(
                By.CSS_SELECTOR, f"svg.eval-chart rect.bar[data-run-id='{rid}']"
            )
            assert bars, f"no bar for run {rid}"
            assert "r_at_5" in {bar.get_attribute("data-metric") for bar in bars}
        assert len(b.driver.find_elements(By.CSS_SELECTOR, "#eval-legend li")) == 2

        Select(b.find("#compare-a")).select_by_value(off)
        Select(b.find("#compare-b")).select_by_value(on)
        b.click("#eval-compare button[type=submit]")
        b.find("#compare-metrics tr[data-metric]")
        expected = http.get(f"/api/v1/knowledge-bases/{kb_id}/eval-runs/{off}/compare/{on}").json()
        assert expected["changed"], "no question changed: the fixture proves nothing"
        items = b.driver.find_elements(By.CSS_SELECTOR, "#changed-questions li")
        shown = {
            (li.get_attribute("data-question-id"), li.get_attribute("data-found-by"))
            for li in items
        }
        assert shown == {(q["question_id"], q["found_by"]) for q in expected["changed"]}
        assert QUESTION in b.find("#changed-questions").text
    assert b.script_errors() == []
