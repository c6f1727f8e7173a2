"""The graph moves the top of the ranking: a second-hop chunk that neither vector nor keyword
search returns is reached through an entity shared by two documents, and ranks in the top 3 of
`/search` and of the chat's references with the graph on, and nowhere with it off."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from neo4j import Driver

from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb, read_sse, upload, wait_terminal
from tests.support.graph_helpers import kb_graph_rule, remove_label
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

QUESTION = "Which firm trained the gunsmiths who started Zentrac Rifles?"
HOP1 = "HOPONE. Zentrac Rifles was started in 1995 by gunsmiths trained at Orvex Arms."
HOP2 = "HOPTWO. Orvex Arms is based in Dayton and sells hunting gear to shops in the Midwest."
# Documents that share the question's words, so that keyword search has a full top 10.
DISTRACTORS = [
    f"DISTRACTOR{i}. Gunsmiths of workshop {i} started rifles training for the firm {i}."
    for i in range(12)
]
TOP_K = 10


def _rules(hop1_relations: list[dict[str, str]] | None = None) -> list[dict[str, Any]]:
    trained_at = [{"node1": "Zentrac Rifles", "node2": "Orvex Arms", "type": "trained_at"}]
    return [
        {
            "name": "entities",
            "match": {"user": {"contains": "list the named things"}},
            "reply": {"content": json.dumps(["Zentrac Rifles"])},
        },
        {
            "name": "answer",
            "match": {"user": {"contains": "Passages:"}},
            "reply": {"content": "Orvex Arms trained them [2]."},
        },
        kb_graph_rule(
            "HOPONE",
            [
                {"name": "Zentrac Rifles", "attributes": []},
                {"name": "Orvex Arms", "attributes": []},
            ],
            trained_at if hop1_relations is None else hop1_relations,
        ),
        kb_graph_rule(
            "HOPTWO",
            [{"name": "Orvex Arms", "attributes": []}, {"name": "Dayton", "attributes": []}],
            [{"node1": "Orvex Arms", "node2": "Dayton", "type": "based_in"}],
        ),
    ]


def _search(http: httpx.Client, kb_id: str, use_graph: bool) -> dict[str, Any]:
    body = {"query": QUESTION, "top_k": TOP_K, "use_graph": use_graph}
    response = http.post(f"/api/v1/knowledge-bases/{kb_id}/search", json=body)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def _marker(hit: dict[str, Any]) -> str:
    return str(hit.get("content") or hit.get("excerpt") or "").split(".")[0]


def _ingest(http: httpx.Client) -> tuple[dict[str, Any], dict[str, str]]:
    """The base with both hops and the distractors, every document completed; its ids by file."""
    kb = create_kb(
        http,
        indexing={"graph_enabled": True},
        extract_config={"enabled": True, "tags": ["trained_at", "based_in"]},
    )
    docs = {"hop1.txt": HOP1, "hop2.txt": HOP2}
    docs.update({f"distractor{i}.txt": text for i, text in enumerate(DISTRACTORS)})
    ids = {
        name: upload(http, kb["id"], name, text.encode()).json()["id"]
        for name, text in docs.items()
    }
    for doc_id in ids.values():
        assert wait_terminal(http, doc_id)["parse_status"] == "completed"
    return kb, ids


def test_second_hop_chunk_reaches_the_top_through_a_cross_document_link(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    fresh_scripted_llm.set_rules(_rules(), default={"content": "no entities here"})
    kb, _ = _ingest(http)

    without = _search(http, kb["id"], use_graph=False)
    assert without["graph_used"] is False
    assert "HOPTWO" not in [_marker(h) for h in without["hits"]]

    with_graph = _search(http, kb["id"], use_graph=True)
    assert with_graph["graph_used"] is True and "Zentrac Rifles" in with_graph["graph_seeds"]
    markers = [_marker(h) for h in with_graph["hits"]]
    assert "HOPTWO" in markers[:3], [
        (m, h["match_type"], h["score"], h["graph"], h["keyword_rank"])
        for m, h in zip(markers, with_graph["hits"], strict=True)
    ]
    hop2 = with_graph["hits"][markers.index("HOPTWO")]
    assert hop2["match_type"] == "graph"
    assert hop2["graph"]["path"] == ["Zentrac Rifles", "trained_at", "Orvex Arms"]
    assert hop2["graph"]["seeds"] == ["Zentrac Rifles"]
    assert with_graph["timings"]["graph_ms"] > 0

    session = http.post("/api/v1/sessions", json={"kb_ids": [kb["id"]]}).json()
    url = f"/api/v1/knowledge-chat/{session['id']}"
    events = read_sse(http, url, {"query": QUESTION})
    refs = next(data for name, data in events if name == "references")["references"]
    by_marker = {_marker(ref): ref for ref in refs}
    assert "HOPTWO" in by_marker, list(by_marker)
    assert by_marker["HOPTWO"]["n"] <= 3
    assert by_marker["HOPTWO"]["graph"]["path"][-1] == "Orvex Arms"

    plain = read_sse(http, url, {"query": QUESTION, "use_graph": False})
    refs = next(data for name, data in plain if name == "references")["references"]
    assert "HOPTWO" not in [_marker(ref) for ref in refs]
    remove_label(neo4j_driver, kb["id"])


def test_a_top_passage_leads_to_the_document_of_an_entity_it_names_without_any_relation(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    # The model reads both names in HOPONE but no relation between them: the only way from the
    # question to HOPTWO is HOPONE itself, a top passage, and the entity it names.
    fresh_scripted_llm.set_rules(_rules(hop1_relations=[]), default={"content": "no entities"})
    kb, ids = _ingest(http)
    (hop1_chunk,) = http.get(f"/api/v1/knowledge/{ids['hop1.txt']}/chunks").json()["items"]
    assert hop1_chunk["entity_keys"] == ["zentrac rifles", "orvex arms"]

    with_graph = _search(http, kb["id"], use_graph=True)
    markers = [_marker(h) for h in with_graph["hits"]]
    assert markers[0] == "HOPONE" and "HOPTWO" in markers[:3], markers
    hop2 = with_graph["hits"][markers.index("HOPTWO")]
    assert hop2["graph"]["path"] == ["Orvex Arms"]
    assert hop2["graph"]["via_chunk_id"] == hop1_chunk["id"]
    without = _search(http, kb["id"], use_graph=False)
    assert "HOPTWO" not in [_marker(h) for h in without["hits"]]
    remove_label(neo4j_driver, kb["id"])
