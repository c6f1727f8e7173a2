"""Admin extraction previews over real HTTP against the scripted LLM: the 5000-character limit
(in characters), the ingestion prompt and parser, labels outside the tags removed, sample texts,
suggested labels, and a failing LLM as 503."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest

from graphrag.extraction.prompt_builder import graph_json_schema
from tests.fakes.scripted_llm import ScriptedLlmServer

pytestmark = pytest.mark.integration

BASE = "/api/v1/initialization/extract"
LIMIT = 5000  # previews.max_text_chars in config/settings.yaml
# The first line of the ingestion protocol (prompt_templates/extract_graph.yaml).
PROTOCOL_LINE = "Turn the passage into a small knowledge graph."
GRAPH = {
    "nodes": [
        {"name": "Ada Moreau", "attributes": ["engineer"]},
        {"name": "Harbor Logistics", "attributes": []},
        {"name": "Lyon", "attributes": []},
    ],
    "relations": [
        {"node1": "Ada Moreau", "node2": "Harbor Logistics", "type": "Works_For"},
        {"node1": "Harbor Logistics", "node2": "Lyon", "type": "located in"},
        {"node1": "Ada Moreau", "node2": "Lyon", "type": "admires"},
    ],
}


def _text(length: int, filler: str = "x") -> str:
    marker = f"MARK{uuid.uuid4().hex[:8]} Ada Moreau works for Harbor Logistics in Lyon. "
    return marker + filler * (length - len(marker))


def _chat_bodies(llm: ScriptedLlmServer) -> list[dict[str, Any]]:
    return [r.body for r in llm.requests("/v1/chat/completions") if isinstance(r.body, dict)]


def _sent_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in body["messages"])


@pytest.mark.parametrize(
    ("filler", "length"),
    [("x", LIMIT), ("é", LIMIT), ("😀", LIMIT), ("中", LIMIT)],
    ids=["ascii", "latin-2-bytes", "emoji-4-bytes", "cjk-3-bytes"],
)
def test_text_at_the_limit_in_characters_is_previewed(
    http: httpx.Client, fresh_scripted_llm: ScriptedLlmServer, filler: str, length: int
) -> None:
    text = _text(length, filler)
    assert len(text) == LIMIT and len(text.encode()) >= LIMIT
    fresh_scripted_llm.set_rules(
        [{"match": {"user": {"contains": "MARK"}}, "reply": {"content": GRAPH}}]
    )

    response = http.post(f"{BASE}/text-relation", json={"text": text, "tags": ["works for"]})

    assert response.status_code == 200, response.text
    assert len(_chat_bodies(fresh_scripted_llm)) == 1


@pytest.mark.parametrize("filler", ["x", "é", "😀"])
def test_one_character_over_the_limit_is_422_naming_it(
    http: httpx.Client, fresh_scripted_llm: ScriptedLlmServer, filler: str
) -> None:
    text = _text(LIMIT + 1, filler)
    response = http.post(f"{BASE}/text-relation", json={"text": text, "tags": ["works for"]})
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_input"
    assert str(LIMIT) in error["message"] and "characters" in error["message"]
    assert error["details"] == {"limit": LIMIT, "length": LIMIT + 1}
    tags = http.post(f"{BASE}/fabri-tag", json={"text": text})
    assert tags.status_code == 422 and str(LIMIT) in tags.json()["error"]["message"]
    assert _chat_bodies(fresh_scripted_llm) == []


def test_relations_outside_the_tags_are_removed_with_the_ingestion_protocol(
    http: httpx.Client, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    fence = "<think>plan</think>```json\n" + json.dumps(GRAPH) + "\n```"
    fresh_scripted_llm.set_rules(
        [{"match": {"user": {"contains": "MARK"}}, "reply": {"content": fence}}]
    )
    text = _text(200)
    tags = ["works for", "located in"]

    response = http.post(f"{BASE}/text-relation", json={"text": text, "tags": tags})

    assert response.status_code == 200, response.text
    body = response.json()
    assert {(r["node1"], r["type"], r["node2"]) for r in body["relations"]} == {
        ("Ada Moreau", "works for", "Harbor Logistics"),
        ("Harbor Logistics", "located in", "Lyon"),
    }
    assert body["dropped_relations"] == 1 and body["output_kind"] == "ok"
    assert [n["name"] for n in body["nodes"]] == ["Ada Moreau", "Harbor Logistics", "Lyon"]
    assert body["nodes"][0]["attributes"] == ["engineer"]
    (sent,) = _chat_bodies(fresh_scripted_llm)
    assert PROTOCOL_LINE in _sent_text(sent) and text in _sent_text(sent)
    assert sent["response_format"]["schema"] == graph_json_schema(tags, strict_tags=True)


@pytest.mark.parametrize(
    "body",
    [
        {"text": "some text", "tags": []},
        {"text": "some text", "tags": ["  ", "\n"]},
        {"text": "some text"},
        {"text": "   ", "tags": ["works for"]},
        {"text": "some text", "tags": ["x" * 201]},
        {"text": "some text", "tags": [f"tag {i}" for i in range(51)]},
    ],
    ids=["no-tags", "blank-tags", "missing-tags", "blank-text", "long-tag", "too-many-tags"],
)
def test_bad_requests_are_422(
    http: httpx.Client, fresh_scripted_llm: ScriptedLlmServer, body: dict[str, Any]
) -> None:
    response = http.post(f"{BASE}/text-relation", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_input"
    assert _chat_bodies(fresh_scripted_llm) == []


def test_fabri_text_writes_a_sample_for_the_tags(
    http: httpx.Client, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    passage = "Ada Moreau works for Harbor Logistics, located in Lyon."
    fresh_scripted_llm.set_rules(
        [
            {
                "match": {"user": {"contains": "supplies"}},
                "reply": {"content": f"<think>x</think>\n{passage}\n"},
            }
        ]
    )
    response = http.post(f"{BASE}/fabri-text", json={"tags": ["supplies", "located in"]})
    assert response.status_code == 200, response.text
    assert response.json() == {"text": passage}
    (sent,) = _chat_bodies(fresh_scripted_llm)
    assert "- supplies\n- located in" in _sent_text(sent)

    untagged = http.post(f"{BASE}/fabri-text", json={})
    assert untagged.status_code == 200 and untagged.json()["text"] == "OK"
    assert "none given" in _sent_text(_chat_bodies(fresh_scripted_llm)[-1])


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('["works for", "Works For", "located in"]', ["works for", "located in"]),
        ('```json\n["supplies", "owns"]\n```', ["supplies", "owns"]),
        ('<think>hmm</think>{"relations": ["signed", "audits"]}', ["signed", "audits"]),
        ('Here you go: ["works for", "founded', ["works for", "founded"]),
        ("- works for\n- located in\n", ["works for", "located in"]),
        ("I cannot help with that.", []),
    ],
    ids=["list", "fenced", "object", "truncated", "bullets", "prose"],
)
def test_fabri_tag_reads_the_model_list_tolerantly(
    http: httpx.Client, fresh_scripted_llm: ScriptedLlmServer, reply: str, expected: list[str]
) -> None:
    fresh_scripted_llm.set_rules(
        [{"match": {"user": {"contains": "Moreau"}}, "reply": {"content": reply}}]
    )
    response = http.post(f"{BASE}/fabri-tag", json={"text": "Ada Moreau works for Harbor."})
    assert response.status_code == 200, response.text
    assert response.json() == {"tags": expected}


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("text-relation", {"text": "Ada Moreau works in Lyon.", "tags": ["works in"]}),
        ("fabri-text", {"tags": ["works in"]}),
        ("fabri-tag", {"text": "Ada Moreau works in Lyon."}),
    ],
)
@pytest.mark.parametrize(
    "fault", [{"status": 500}, {"malformed_json": True}], ids=["500", "bad-body"]
)
def test_llm_failure_is_503(
    http: httpx.Client,
    fresh_scripted_llm: ScriptedLlmServer,
    path: str,
    body: dict[str, Any],
    fault: dict[str, Any],
) -> None:
    fresh_scripted_llm.set_rules([{"match": {}, "fault": fault}])
    response = http.post(f"{BASE}/{path}", json=body)
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "llm_unavailable"
