"""The web console in headless Chromium against the real API, worker, PostgreSQL, Redis and Neo4j.

One journey, as a new user takes it: sign in, create a base with the graph on, drop two files and
watch them complete live, open a chunk, ask a question and open a citation, stop an answer, walk
the graph to a source chunk, run an extraction preview and apply it, manage keys; then another
tenant's key sees none of it. Screenshots of each page (1280x800) go to a temporary folder, or
to docs/screenshots/ with `CONSOLE_SCREENSHOTS=docs` (a test run leaves the tree as
it found it).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.auth_helpers import bearer, make_key
from tests.support.browser import DESKTOP, NARROW, Browser, chromium, sign_in
from tests.support.graph_helpers import kb_graph_rule
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.browser

DOC_SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PROCESS_WAIT_S = 120.0
EXTRACTION_DELAY_S = 1.0  # keeps each document visibly "finalizing" before it completes
# The slow answer streams a piece every SLOW_PIECE_S, for about a minute: it is still streaming
# when even a busy machine clicks "stop", and no read of it waits long enough to time out.
SLOW_PIECE_S = 0.5
SLOW_ANSWER = "Ship engines are large. " * 60
KB_NAME = "Nordic plants"
NOTE_TITLE = "meeting notes"
EDITED_CHUNK_SIZE = 400
INSTRUCTIONS = "Use full company names."
QUESTION = "Who runs the Zorvath Industries plant in Tromso?"
ANSWER = "Elin Brask runs the Tromso plant [1]; she studied in Bergen [2]."
SLOW_QUESTION = "Tell me everything about ship engines."
AGENT_QUESTION = "Where does Elin Brask work?"
AGENT_ANSWER = "Elin Brask directs the Tromso plant [1]."
AGENT_STEP = "This is step {n} of"
FILES = {
    "plant.md": (
        "# Zorvath Industries\n\nPLANTDOC. Zorvath Industries runs a plant in Tromso that builds "
        "ship engines. Elin Brask is the director of the Tromso plant."
    ),
    "people.txt": (
        "PEOPLEDOC. Elin Brask keeps bees and plays the cello. She studied at the Bergen "
        "School of Engineering."
    ),
}
WORKING_ROWS = ", ".join(
    f"#doc-rows tr[data-status='{status}']" for status in ("pending", "processing", "finalizing")
)
PREVIEW_TEXT = "PREVIEWTXT. Ada Lovelace worked with Charles Babbage on the Analytical Engine."


def _rules() -> list[dict[str, Any]]:
    delay = {"fault": {"delay_s": EXTRACTION_DELAY_S}}
    search = {"name": "knowledge_search", "arguments": {"query": "Elin Brask plant"}}
    return [
        {
            "name": "agent step 1",
            "match": {"prompt": {"contains": AGENT_STEP.format(n=1)}},
            "reply": {"content": "I will look it up.", "tool_calls": [search]},
        },
        {
            "name": "agent step 2",
            "match": {"prompt": {"contains": AGENT_STEP.format(n=2)}},
            "reply": {"content": AGENT_ANSWER},
        },
        {
            "name": "question entities",
            "match": {"user": {"contains": "list the named things"}},
            "reply": {"content": json.dumps(["Zorvath Industries", "Tromso"])},
        },
        {
            "name": "slow answer",
            # The answer's call only (its user message has the passages), not the question's
            # entity call, which would wait its whole answer out.
            "match": {"user": {"contains": "Passages:"}, "prompt": {"contains": SLOW_QUESTION}},
            "reply": {"content": SLOW_ANSWER},
            "fault": {"piece_delay_s": SLOW_PIECE_S},
        },
        {
            "name": "answer",
            "match": {"user": {"contains": "Passages:"}},
            "reply": {"content": ANSWER},
        },
        kb_graph_rule(
            "PLANTDOC",
            [
                {"name": "Zorvath Industries", "attributes": ["engine maker"]},
                {"name": "Elin Brask", "attributes": ["plant director"]},
                {"name": "Tromso", "attributes": ["city"]},
            ],
            [
                {"node1": "Elin Brask", "node2": "Zorvath Industries", "type": "runs"},
                {"node1": "Zorvath Industries", "node2": "Tromso", "type": "located_in"},
            ],
            **delay,
        ),
        kb_graph_rule(
            "PEOPLEDOC",
            [
                {"name": "Elin Brask", "attributes": ["beekeeper"]},
                {"name": "Zorvath Industries"},
                {"name": "Bergen School of Engineering", "attributes": ["school"]},
            ],
            [
                {"node1": "Elin Brask", "node2": "Zorvath Industries", "type": "runs"},
                {"node1": "Elin Brask", "node2": "Bergen School of Engineering", "type": "studied"},
            ],
            **delay,
        ),
        kb_graph_rule(
            "PREVIEWTXT",
            [{"name": "Ada Lovelace", "attributes": ["mathematician"]}, {"name": "C. Babbage"}],
            [{"node1": "Ada Lovelace", "node2": "C. Babbage", "type": "worked_with"}],
        ),
    ]


@pytest.fixture(scope="module")
def keys(settings: Settings, session_factory: sessionmaker[Session]) -> dict[str, str]:
    """An admin key of a tenant of its own, and a read/write key of another tenant."""
    suffix = uuid.uuid4().hex[:8]
    owner = make_key(session_factory, settings, f"console-{suffix}", list(Capability), "console")
    other = make_key(
        session_factory, settings, f"other-{suffix}", [Capability.READ, Capability.WRITE], "other"
    )
    return {"owner": owner.key, "other": other.key}


@pytest.fixture(scope="module")
def browser(api_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    to_docs = os.environ.get("CONSOLE_SCREENSHOTS") == "docs"
    shots = DOC_SHOTS if to_docs else tmp_path_factory.mktemp("screenshots")
    with chromium(api_url, shots) as b:
        yield b


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("console-files")
    paths = {}
    for name, text in FILES.items():
        path = folder / f"{uuid.uuid4().hex[:6]}-{name}"
        path.write_text(text + f"\n\n{uuid.uuid4()}\n")
        paths[name] = path
    return paths


def sign_out(b: Browser) -> None:
    b.click("#sign-out")
    b.find("#api-key")


def create_base(b: Browser) -> str:
    b.go("#/bases")
    b.find("#create-kb input[name=name]").send_keys(KB_NAME)
    b.find("#create-kb input[name=description]").send_keys("Plants, people and places")
    b.find("#create-kb input[name=tags]").send_keys("runs, located_in, studied")
    b.click("#create-kb input[name=graph]")
    b.click("#create-kb button[type=submit]")
    row = b.find(f"#kb-rows tr[data-kb-name='{KB_NAME}']")
    assert "graph on" in row.text
    kb_id: str = row.get_attribute("data-kb-id") or ""
    return kb_id


def edit_base(b: Browser, http: httpx.Client, kb_id: str) -> None:
    """Change the chunking and the extraction instructions in the edit form."""
    b.click(f"#kb-rows tr[data-kb-id='{kb_id}'] button.edit")
    size = b.find("#edit-kb input[name=chunk_size]")
    size.clear()
    size.send_keys(str(EDITED_CHUNK_SIZE))
    b.find("#edit-kb textarea[name=custom_instructions]").send_keys(INSTRUCTIONS)
    b.screenshot("knowledge-bases")
    b.click("#edit-kb button[type=submit]")
    b.until(lambda d: not d.find_elements(By.ID, "edit-kb"))
    kb = http.get(f"/api/v1/knowledge-bases/{kb_id}").json()
    assert kb["chunking"]["chunk_size"] == EDITED_CHUNK_SIZE
    assert kb["extract_config"]["custom_instructions"] == INSTRUCTIONS
    assert kb["graph_on"] is True
    assert kb["extract_config"]["tags"] == ["runs", "located_in", "studied"]


def drop_files(b: Browser, paths: list[Path]) -> None:
    """Drop the files on the drop zone as a user's drag and drop does (a real `drop` event)."""
    payload = [{"name": p.name, "text": p.read_text()} for p in paths]
    b.js(
        """
        const transfer = new DataTransfer();
        for (const f of arguments[0]) {
          transfer.items.add(new File([f.text], f.name, {type: "text/plain"}));
        }
        const zone = document.getElementById("dropzone");
        for (const type of ["dragover", "drop"]) {
          const init = {dataTransfer: transfer, bubbles: true, cancelable: true};
          zone.dispatchEvent(new DragEvent(type, init));
        }
        """,
        payload,
    )


def watch_documents_complete(b: Browser, names: list[str]) -> None:
    """Each row is first seen working, then completed, without reloading the page."""
    marker = b.js("window.__sameDocument = Math.random(); return window.__sameDocument")
    for name in names:
        b.find(f"#upload-list li[data-file-name='{name}'] progress[value='1']")
    b.until(lambda d: d.find_elements(By.CSS_SELECTOR, WORKING_ROWS))
    for name in names:
        b.find(f"#doc-rows tr[data-doc-name='{name}'][data-status='completed']", PROCESS_WAIT_S)
    assert b.js("return window.__sameDocument") == marker  # updated live, not by a reload
    for name in names:
        row = b.find(f"#doc-rows tr[data-doc-name='{name}']")
        assert "entities" in row.find_element(By.CSS_SELECTOR, ".counts").text
        graph_stage = row.find_element(By.CSS_SELECTOR, "li[data-stage='graph']")
        assert graph_stage.get_attribute("data-status") == "done", row.text


def open_a_chunk(b: Browser, http: httpx.Client, name: str) -> None:
    b.click(f"#doc-rows tr[data-doc-name='{name}'] .show-chunks")
    row = b.find("#chunks tbody tr")
    chunk_id = row.get_attribute("data-chunk-id")
    assert "done" in row.text  # graph status of the chunk
    row.find_element(By.CSS_SELECTOR, ".open-chunk").click()
    b.find("#chunk-dialog[open]")
    expected = http.get(f"/api/v1/chunks/{chunk_id}").json()["content"]
    assert b.find("#chunk-content").text.strip() == expected.strip()


def import_reparse_delete(b: Browser) -> None:
    """A text imported through the form completes; re-parsed, it completes again as attempt 2;
    deleted (after the confirmation), its row goes."""
    b.find("#import-text input[name=title]").send_keys(NOTE_TITLE)
    b.find("#import-text textarea[name=content]").send_keys(f"NOTEDOC. {uuid.uuid4()}")
    b.click("#import-text button[type=submit]")
    row = f"#doc-rows tr[data-doc-name='{NOTE_TITLE}.md']"
    b.find(f"{row}[data-status='completed'][data-attempt='1']", PROCESS_WAIT_S)
    b.click(f"{row} button.reparse")
    b.find(f"{row}[data-status='completed'][data-attempt='2']", PROCESS_WAIT_S)
    b.click(f"{row} button.delete")
    b.until(ec.alert_is_present()).accept()
    b.until(lambda d: not d.find_elements(By.CSS_SELECTOR, row))


def close_dialog(b: Browser) -> None:
    b.find("#chunk-dialog[open]").send_keys(Keys.ESCAPE)
    b.until(lambda d: d.find_element(By.ID, "chunk-dialog").get_attribute("open") is None)


def ask_and_open_citation(b: Browser, http: httpx.Client) -> None:
    b.go("#/chat")
    b.click("#new-session input[name=kb]")
    b.find("#new-session input[name=title]").send_keys("Plant questions")
    b.click("#new-session button[type=submit]")
    question = b.find("#question")
    question.send_keys(QUESTION)
    question.send_keys(Keys.ENTER)
    b.text_in("#chat-status", "done", PROCESS_WAIT_S)
    answer = b.find("#chat-log .msg.assistant")
    assert "Elin Brask runs the Tromso plant" in answer.text
    # The graph's part: the entities read in the question, and for each passage the graph ranked,
    # the question entity it started from (people.txt holds no question word: only the graph
    # can reach it).
    assert "question entities: Zorvath Industries, Tromso" in answer.text
    refs = answer.find_elements(By.CSS_SELECTOR, ".refs li[data-match]")
    assert "graph" in [ref.get_attribute("data-match") for ref in refs]  # people.txt, via the graph
    for ref in refs:
        led = ref.find_elements(By.CSS_SELECTOR, ".graph-led")
        assert bool(led) == (ref.get_attribute("data-graph") == "yes"), ref.text
        if ref.get_attribute("data-match") == "graph":
            assert led and "from Zorvath Industries" in led[0].text, ref.text
    citation = answer.find_element(By.CSS_SELECTOR, "button.citation[data-n='1']")
    chunk_id = citation.get_attribute("data-chunk-id")
    citation.click()
    b.find("#chunk-dialog[open]")
    expected = http.get(f"/api/v1/chunks/{chunk_id}").json()["content"]
    assert b.find("#chunk-content").text.strip() == expected.strip()
    assert "[1]" in b.find("#chunk-meta").text


def ask_in_agent_mode(b: Browser) -> None:
    b.click("#agent-mode")
    question = b.find("#question")
    question.send_keys(AGENT_QUESTION)
    question.send_keys(Keys.ENTER)
    b.text_in("#chat-status", "done", PROCESS_WAIT_S)
    answer = b.driver.find_elements(By.CSS_SELECTOR, "#chat-log .msg.assistant")[-1]
    kinds = [
        li.get_attribute("data-kind") for li in answer.find_elements(By.CSS_SELECTOR, ".steps li")
    ]
    assert kinds[:3] == ["think", "act", "observe"] and kinds[-1] == "respond", kinds
    act = answer.find_element(By.CSS_SELECTOR, ".steps li[data-kind='act']").text
    assert 'knowledge_search({"query":"Elin Brask plant"})' in act
    observed = answer.find_element(By.CSS_SELECTOR, ".steps li[data-kind='observe']").text
    assert "passage(s) for 'Elin Brask plant'" in observed
    assert AGENT_ANSWER.split(" [")[0] in answer.find_element(By.CSS_SELECTOR, ".text").text
    assert answer.find_elements(By.CSS_SELECTOR, ".text button.citation[data-n='1']")
    b.click("#agent-mode")  # back to the knowledge chat


def stop_an_answer(b: Browser) -> None:
    question = b.find("#question")
    question.send_keys(SLOW_QUESTION)
    question.send_keys(Keys.ENTER)
    b.text_in("#chat-log .msg.assistant:last-child .text", "Ship engines")  # it streams
    b.click("#stop")  # enabled only while an answer streams
    b.text_in("#chat-status", "stopped")
    answer = b.driver.find_elements(By.CSS_SELECTOR, "#chat-log .msg.assistant")[-1].text
    assert "Stopped." in answer
    assert answer.count("Ship engines") < SLOW_ANSWER.count("Ship engines"), "never cut short"
    assert b.find("#send").is_enabled()


def graph_to_chunks(b: Browser) -> None:
    """Both files name Elin Brask: one node, whose details list both, each with its chunk."""
    b.go("#/graph")
    b.find("#graph-kb option")
    b.find("#graph-entity").send_keys("Elin")
    b.click("#graph-search button[type=submit]")
    node = b.find("svg.graph g.node[data-name='Elin Brask']")
    assert (
        len(b.driver.find_elements(By.CSS_SELECTOR, "svg.graph g.node[data-name='Elin Brask']"))
        == 1
    )
    assert node.get_attribute("data-documents") == "2"
    assert len(b.driver.find_elements(By.CSS_SELECTOR, "svg.graph g.edge")) >= 2
    node.send_keys(Keys.ENTER)  # an entity is a focusable button: keyboard works as a click
    b.text_in("#entity-title", "Elin Brask")
    assert len(b.driver.find_elements(By.CSS_SELECTOR, "#entity-documents > li")) == 2
    source = b.find("#entity-documents .sources li")
    source.find_element(By.CSS_SELECTOR, ".open-source").click()
    b.find("#chunk-dialog[open]")
    assert "Elin Brask" in b.find("#chunk-content").text


def run_preview(b: Browser, http: httpx.Client, kb_id: str) -> None:
    b.go("#/previews")
    b.find("#preview-text").send_keys(PREVIEW_TEXT)
    b.find("#preview-tags").send_keys("worked_with")
    b.click("#run-preview")
    b.text_in("#preview-summary", "2 entities · 1 relations")
    assert "C. Babbage" in b.find("#preview-relations").text
    b.screenshot("extraction-preview")
    b.find(f"#apply-kb option[value='{kb_id}']")
    b.click("#apply-config button[type=submit]")
    b.text_in("#toast", "Extraction config applied")
    config = http.get(f"/api/v1/knowledge-bases/{kb_id}").json()["extract_config"]
    assert config["text"] == PREVIEW_TEXT and config["tags"] == ["worked_with"]


def create_a_key(b: Browser) -> None:
    b.go("#/keys")
    b.find("#create-key input[name=name]").send_keys("reader for the wiki")
    b.click("#create-key button[type=submit]")
    assert (b.find("#new-key-value").get_attribute("value") or "").startswith("grk_")
    b.text_in("#key-rows", "reader for the wiki")


def see_nothing_of_the_other_tenant(b: Browser, kb_id: str, key: str) -> None:
    sign_in(b, key)
    b.text_in("#kb-rows", "No knowledge base yet.")
    assert KB_NAME not in b.find("#kb-table").text
    nav = b.find("#nav").text
    assert "API keys" not in nav and "Extraction previews" not in nav
    b.go(f"#/bases/{kb_id}")
    b.text_in("#toast", "not found")
    b.go("#/chat")
    b.find("#new-session")
    assert b.driver.find_elements(By.CSS_SELECTOR, "#session-list li") == []
    assert b.driver.find_elements(By.CSS_SELECTOR, "#new-session input[name=kb]") == []


def test_console_journey(
    browser: Browser,
    api_url: str,
    keys: dict[str, str],
    files: dict[str, Path],
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    fresh_scripted_llm.set_rules(_rules(), default={"content": "[]"})
    b = browser
    b.open("/")
    b.find("#api-key")
    b.screenshot("sign-in")
    with httpx.Client(base_url=api_url, headers=bearer(keys["owner"]), timeout=30.0) as http:
        sign_in(b, keys["owner"])
        assert b.js("return sessionStorage.length") == 1 and b.js("return localStorage.length") == 0
        kb_id = create_base(b)
        edit_base(b, http, kb_id)

        b.go(f"#/bases/{kb_id}")
        b.text_in("h1", KB_NAME)
        names = [p.name for p in files.values()]
        drop_files(b, list(files.values()))
        watch_documents_complete(b, names)
        open_a_chunk(b, http, names[0])
        b.screenshot("chunk")
        close_dialog(b)
        b.screenshot("documents")
        import_reparse_delete(b)

        ask_and_open_citation(b, http)
        close_dialog(b)
        b.screenshot("chat")
        stop_an_answer(b)
        ask_in_agent_mode(b)
        b.screenshot("chat-agent")

        graph_to_chunks(b)
        close_dialog(b)
        b.screenshot("graph")

        b.viewport(NARROW)
        b.go(f"#/bases/{kb_id}")
        table = b.find(f"#doc-rows tr[data-doc-name='{names[0]}']")
        b.js("arguments[0].scrollIntoView()", table)
        b.screenshot("documents-narrow")
        b.viewport(DESKTOP)

        run_preview(b, http, kb_id)

        create_a_key(b)
        b.screenshot("api-keys")

    sign_out(b)
    assert b.js("return sessionStorage.length") == 0
    see_nothing_of_the_other_tenant(b, kb_id, keys["other"])
    assert b.script_errors() == []
