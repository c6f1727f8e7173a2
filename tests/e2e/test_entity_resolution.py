"""Entity resolution on real services: a real worker resolves each completed document's entities
in Neo4j (the scripted model extracts and judges); an alias is merged, a homonym kept apart with
its reason, an administrator's split survives a re-parse's new run, and a deleted document
withdraws exactly the links it justified."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb, upload, wait_terminal
from tests.support.graph_helpers import kb_graph_rule
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

WAIT_S = 60.0


def _node(name: str, *attributes: str) -> dict[str, Any]:
    return {"name": name, "attributes": list(attributes)}


def _rel(a: str, b: str, kind: str) -> dict[str, str]:
    return {"node1": a, "node2": b, "type": kind}


RULES = [
    kb_graph_rule(
        "RESADA",
        [_node("Ada Moreau", "physicist"), _node("Lumen Lab"), _node("Lyon")],
        [_rel("Ada Moreau", "Lumen Lab", "works_at"), _rel("Ada Moreau", "Lyon", "lives_in")],
    ),
    kb_graph_rule(
        "RESINITIAL",
        [_node("A. Moreau"), _node("Lumen Lab")],
        [_rel("A. Moreau", "Lumen Lab", "works_at")],
    ),
    kb_graph_rule(
        "RESTYPO",
        [_node("Ada Moreua"), _node("Lumen Laboratory")],
        [_rel("Ada Moreua", "Lumen Laboratory", "works_at")],
    ),
    kb_graph_rule(
        "RESSMITHACME",
        [_node("John Smith", "engineer"), _node("Acme Corp"), _node("London")],
        [_rel("John Smith", "Acme Corp", "works_at"), _rel("John Smith", "London", "lives_in")],
    ),
    kb_graph_rule(
        "RESSMITHMUSIC",
        [_node("John Smith", "violinist"), _node("Boston Symphony"), _node("Boston")],
        [
            _rel("John Smith", "Boston Symphony", "works_at"),
            _rel("John Smith", "Boston", "lives_in"),
        ],
    ),
    {
        "name": "judge",
        "match": {"prompt": {"contains": "You check a knowledge graph for duplicates"}},
        "reply": {"content": json.dumps({"answers": [{"pair": 1, "same": True}]})},
    },
]


def _base(http: httpx.Client, llm: ScriptedLlmServer) -> str:
    llm.set_rules(RULES, default={"content": "[]"})
    kb = create_kb(
        http,
        indexing={"graph_enabled": True},
        extract_config={"enabled": True, "tags": ["works_at", "lives_in"]},
    )
    return str(kb["id"])


def _ingest(http: httpx.Client, kb_id: str, marker: str) -> str:
    text = f"{marker}. A short note.\n{uuid.uuid4()}".encode()
    doc = upload(http, kb_id, f"{marker.lower()}.md", text, "text/markdown").json()
    assert wait_terminal(http, doc["id"])["parse_status"] == "completed"
    return str(doc["id"])


def _audit(http: httpx.Client, kb_id: str, key: str) -> dict[str, Any]:
    response = http.get(f"/api/v1/knowledge-bases/{kb_id}/entities/{key}/resolution")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _members(audit: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((m["knowledge_id"], m["name"]) for e in audit["entities"] for m in e["members"])


def _until(
    read: Callable[[], dict[str, Any]], done: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_S
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"resolution not reached in {WAIT_S}s: {value}")
        time.sleep(0.3)


def _resolved(audit: dict[str, Any], count: int) -> bool:
    return len(_members(audit)) >= count


def test_an_alias_merges_and_a_homonym_stays_apart(
    http: httpx.Client, worker: WorkerProcess, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    kb_id = _base(http, fresh_scripted_llm)
    ada = _ingest(http, kb_id, "RESADA")
    initial = _ingest(http, kb_id, "RESINITIAL")
    audit = _until(lambda: _audit(http, kb_id, "A. Moreau"), lambda a: _resolved(a, 2))
    [entity] = audit["entities"]
    assert {(m["knowledge_id"], m["name"]) for m in entity["members"]} == {
        (ada, "Ada Moreau"),
        (initial, "A. Moreau"),
    }
    joined = next(m for m in entity["members"] if m["knowledge_id"] == initial)
    assert joined["rule"] == "initials+neighbours"
    assert joined["justified_by"] == [ada] and joined["manual"] is False
    # The graph view draws one node for both names.
    view = http.post(f"/api/v1/knowledge-bases/{kb_id}/graph-view", json={"entity": "Moreau"})
    assert view.status_code == 200, view.text
    moreau = [n for n in view.json()["nodes"] if "Moreau" in n["name"]]
    assert len(moreau) == 1 and set(moreau[0]["names"]) == {"Ada Moreau", "A. Moreau"}

    # A misspelt name whose neighbour is written differently: the rules ask the model (here
    # scripted to say "same"), and the link says so.
    typo = _ingest(http, kb_id, "RESTYPO")
    asked = _until(lambda: _audit(http, kb_id, "Ada Moreua"), lambda a: _resolved(a, 3))
    link = next(m for e in asked["entities"] for m in e["members"] if m["knowledge_id"] == typo)
    assert link["rule"] == "llm:typo" and "the model said the same entity" in link["reason"]

    acme = _ingest(http, kb_id, "RESSMITHACME")
    music = _ingest(http, kb_id, "RESSMITHMUSIC")
    smith = _until(lambda: _audit(http, kb_id, "john smith"), lambda a: _resolved(a, 2))
    assert len(smith["entities"]) == 2, smith
    [apart] = smith["kept_apart"]
    assert apart["knowledge_id"] == music and apart["rule"] == "same_name_conflict"
    assert "no shared neighbour" in apart["reason"] and "not asked" in apart["reason"]
    assert acme != music


def test_a_split_survives_a_reparse_and_a_delete_withdraws_its_links(
    http: httpx.Client, worker: WorkerProcess, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    kb_id = _base(http, fresh_scripted_llm)
    ada = _ingest(http, kb_id, "RESADA")
    initial = _ingest(http, kb_id, "RESINITIAL")
    _until(lambda: _audit(http, kb_id, "a moreau"), lambda a: _resolved(a, 2))

    split = http.post(
        f"/api/v1/knowledge-bases/{kb_id}/entities/a moreau/split",
        json={"knowledge_ids": [initial]},
    )
    assert split.status_code == 200, split.text
    after = split.json()
    assert _members(after) == [(initial, "A. Moreau")]
    assert after["entities"][0]["members"][0]["manual"] is True
    assert after["kept_apart"][0]["manual"] is True

    # A re-parse writes new nodes and resolves them again: the split holds.
    assert http.post(f"/api/v1/knowledge/{initial}/reparse").status_code == 202
    assert wait_terminal(http, initial)["parse_status"] == "completed"
    again = _until(lambda: _audit(http, kb_id, "a moreau"), lambda a: _resolved(a, 1))
    assert _members(again) == [(initial, "A. Moreau")]
    assert again["entities"][0]["members"][0]["rule"] == "manual"
    ada_side = _audit(http, kb_id, "ada moreau")
    assert _members(ada_side) == [(ada, "Ada Moreau")]

    # Merged back by hand: the manual link outlives the other document's delete.
    merged = http.post(
        f"/api/v1/knowledge-bases/{kb_id}/entities/ada moreau/merge", json={"other": "A. Moreau"}
    )
    assert merged.status_code == 200, merged.text
    assert len(merged.json()["entities"]) == 1 and len(_members(merged.json())) == 2
    assert http.delete(f"/api/v1/knowledge/{ada}").status_code == 202
    final = _until(
        lambda: _audit(http, kb_id, "a moreau"), lambda a: all(m[0] != ada for m in _members(a))
    )
    [member] = [m for e in final["entities"] for m in e["members"]]
    assert member["knowledge_id"] == initial and member["manual"] is True


def test_a_deleted_document_withdraws_only_the_links_it_justified(
    http: httpx.Client, worker: WorkerProcess, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    kb_id = _base(http, fresh_scripted_llm)
    ada = _ingest(http, kb_id, "RESADA")
    initial = _ingest(http, kb_id, "RESINITIAL")
    acme = _ingest(http, kb_id, "RESSMITHACME")
    _until(lambda: _audit(http, kb_id, "a moreau"), lambda a: _resolved(a, 2))
    _until(lambda: _audit(http, kb_id, "john smith"), lambda a: _resolved(a, 1))
    lab_before = _audit(http, kb_id, "lumen lab")
    assert len(lab_before["entities"]) == 1 and len(_members(lab_before)) == 2

    assert http.delete(f"/api/v1/knowledge/{ada}").status_code == 202
    # The alias link rested on the deleted document alone: withdrawn, and the remaining node
    # resolved again, on its own now.
    alone = _until(
        lambda: _audit(http, kb_id, "a moreau"),
        lambda a: (
            _members(a) == [(initial, "A. Moreau")]
            and a["entities"][0]["members"][0]["rule"] == "new"
        ),
    )
    assert alone["entities"][0]["members"][0]["justified_by"] == [initial]
    # What did not rest on it stays as it was.
    smith = _audit(http, kb_id, "john smith")
    assert _members(smith) == [(acme, "John Smith")]
    gone = http.get(f"/api/v1/knowledge-bases/{kb_id}/entities/lyon/resolution")
    assert gone.status_code == 404


def test_bad_requests_get_clear_errors(
    http: httpx.Client, worker: WorkerProcess, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    kb_id = _base(http, fresh_scripted_llm)
    missing = http.get(f"/api/v1/knowledge-bases/{kb_id}/entities/nobody/resolution")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "entity_not_found"
    blank = http.get(f"/api/v1/knowledge-bases/{kb_id}/entities/%21%21/resolution")
    assert blank.status_code == 422
    other_kb = http.get(f"/api/v1/knowledge-bases/{uuid.uuid4()}/entities/x/resolution")
    assert other_kb.status_code == 404 and other_kb.json()["error"]["code"] == "not_found"
    bad_split = http.post(
        f"/api/v1/knowledge-bases/{kb_id}/entities/x/split", json={"knowledge_ids": ["nope"]}
    )
    assert bad_split.status_code == 422
