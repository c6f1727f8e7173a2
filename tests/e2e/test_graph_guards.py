"""A weak model's placeholders through the real worker: nothing of them in Neo4j, counted per
document and shown by the API."""

from __future__ import annotations

import uuid

import httpx
import pytest
from neo4j import Driver

from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb, upload, wait_terminal
from tests.support.graph_helpers import graph_nodes, graph_relations, kb_graph_rule
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

CHUNKING = {"chunk_size": 80, "chunk_overlap": 0, "separators": ["\n\n"]}
PARAGRAPHS = {
    "ALPHA": "ALPHA. Ada Moreau founded Northwind Robotics in Lyon.",
    "BRAVO": "BRAVO. Harbor Logistics uses the Sorter X2 in Rotterdam.",
}


def _node(name: str) -> dict[str, object]:
    return {"name": name, "attributes": []}


def _rel(node1: str, node2: str, kind: str) -> dict[str, str]:
    return {"node1": node1, "node2": node2, "type": kind}


def test_placeholders_never_reach_neo4j_and_their_drops_are_counted(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    fresh_scripted_llm.set_rules(
        [
            # The schema copied, the few-shot example's own name, punctuation: none is an entity.
            kb_graph_rule(
                "ALPHA",
                [
                    _node("<entity>"),
                    _node("Entity"),
                    _node("Jonas Verbeek"),
                    _node("..."),
                    _node("Ada Moreau"),
                    _node("Northwind Robotics"),
                ],
                [
                    _rel("Ada Moreau", "Northwind Robotics", "founded"),
                    _rel("<entity>", "Ada Moreau", "founded"),
                    _rel("Jonas Verbeek", "Northwind Robotics", "founded"),
                    _rel("Northwind Robotics", "Lyon", "located_in"),  # Lyon was not listed
                ],
            ),
            kb_graph_rule(
                "BRAVO",
                [_node("<entity>"), _node("<entity>"), _node("  "), _node("Harbor Logistics")],
                [_rel("<entity>", "<entity>", "uses")],
            ),
        ],
        default={"content": "I cannot find entities here."},
    )
    kb = create_kb(
        http,
        chunking=CHUNKING,
        indexing={"graph_enabled": True},
        extract_config={
            "enabled": True,
            "tags": ["founded", "located_in", "uses"],
            "text": "Jonas Verbeek founded a bakery.",
            "nodes": [_node("Jonas Verbeek"), _node("bakery")],
            "relations": [_rel("Jonas Verbeek", "bakery", "founded")],
        },
    )
    text = "\n\n".join(PARAGRAPHS.values()) + f"\n\nunique {uuid.uuid4()}"
    doc = wait_terminal(http, upload(http, kb["id"], "weak.md", text.encode()).json()["id"])
    assert doc["parse_status"] == "completed", doc

    assert set(graph_nodes(neo4j_driver, doc["id"])) == {
        "Ada Moreau",
        "Northwind Robotics",
        "Harbor Logistics",
    }
    assert graph_relations(neo4j_driver, doc["id"]) == {
        ("Ada Moreau", "founded", "Northwind Robotics")
    }
    shown = http.get(f"/api/v1/knowledge/{doc['id']}").json()
    assert (shown["entity_count"], shown["relation_count"]) == (3, 1)
    assert shown["graph_drops"] == {
        "dropped_entities": 7,
        "dropped_relations": 4,
        "entities": {"placeholder": 5, "no_name": 2},
        "relations": {"unknown_end": 4},
    }
