"""POST /api/v1/knowledge-bases/{id}/graph-search, and graph-view (the console's drawing of it, one
node per entity), over real HTTP, PostgreSQL and Neo4j."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import neo4j
import pytest
from sqlalchemy.orm import Session, sessionmaker

from api.app import create_app
from graphrag.settings import Settings
from tests.support.api_helpers import create_kb
from tests.support.graph_data import GraphKb as Kb
from tests.support.graph_data import graph, graph_kb, one_entity_in_two_documents
from tests.support.http_server import ThreadedServer

pytestmark = pytest.mark.integration


@pytest.fixture
def kb(
    http: httpx.Client,
    neo4j_driver: neo4j.Driver,
    settings: Settings,
    session_factory: sessionmaker[Session],
) -> Iterator[Kb]:
    """A fresh graph-enabled base; its graph is deleted afterwards."""
    with graph_kb(http, neo4j_driver, settings, session_factory) as made:
        yield made


def _post(
    http: httpx.Client, kb_id: uuid.UUID | str, body: dict[str, Any], route: str = "graph-search"
) -> httpx.Response:
    return http.post(f"/api/v1/knowledge-bases/{kb_id}/{route}", json=body)


def _search(
    http: httpx.Client, kb_id: uuid.UUID, route: str = "graph-search", **body: Any
) -> dict[str, Any]:
    response = _post(http, kb_id, body, route)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def _view(http: httpx.Client, kb_id: uuid.UUID, **body: Any) -> dict[str, Any]:
    return _search(http, kb_id, "graph-view", **body)


def _matched(answer: dict[str, Any]) -> list[str]:
    return [e["name"] for e in answer["entities"] if e["matched"]]


def _no_marker(answer: dict[str, Any], *except_: str) -> None:
    raised = {k for k, v in answer["truncated"].items() if v}
    assert raised == set(except_), answer["truncated"]


def test_entities_with_and_without_relations_and_their_sources(http: httpx.Client, kb: Kb) -> None:
    doc, (c0, c1) = kb.document("Ada Lovelace worked on the engine.", "Ada Solo stands alone.")
    kb.store.write_chunk_graph(
        kb.id,
        doc,
        c0,
        graph(
            [("Ada Lovelace", ["mathematician"]), "Analytical Engine"],
            [("Ada Lovelace", "WORKED_ON", "Analytical Engine")],
        ),
    )
    kb.store.write_chunk_graph(kb.id, doc, c1, graph(["Ada Solo"]))

    answer = _search(http, kb.id, entity="Ada")

    assert _matched(answer) == ["Ada Solo", "Ada Lovelace"]  # shorter first
    by_name = {e["name"]: e for e in answer["entities"]}
    assert by_name["Analytical Engine"]["matched"] is False
    assert by_name["Ada Lovelace"]["attributes"] == ["mathematician"]
    assert by_name["Ada Lovelace"]["chunks"] == [str(c0)]
    assert by_name["Ada Solo"]["chunks"] == [str(c1)]
    assert by_name["Ada Solo"]["knowledge_id"] == str(doc)
    [rel] = answer["relations"]
    assert (rel["source"], rel["type"], rel["target"]) == (
        by_name["Ada Lovelace"]["id"],
        "WORKED_ON",
        by_name["Analytical Engine"]["id"],
    )
    assert rel["chunks"] == [str(c0)]
    assert answer["sources"] == [
        {
            "id": str(c1),
            "knowledge_id": str(doc),
            "page": 2,
            "excerpt": "Ada Solo stands alone.",
            "excerpt_truncated": False,
        },
        {
            "id": str(c0),
            "knowledge_id": str(doc),
            "page": 1,
            "excerpt": "Ada Lovelace worked on the engine.",
            "excerpt_truncated": False,
        },
    ]
    _no_marker(answer)


def test_substring_is_case_sensitive(http: httpx.Client, kb: Kb) -> None:
    doc, (c0,) = kb.document("Ada Lovelace.")
    kb.store.write_chunk_graph(kb.id, doc, c0, graph(["Ada Lovelace"]))

    assert _matched(_search(http, kb.id, entity="Lovelace")) == ["Ada Lovelace"]
    assert _matched(_search(http, kb.id, entity="a Lov")) == ["Ada Lovelace"]
    assert _search(http, kb.id, entity="lovelace")["entities"] == []
    assert _search(http, kb.id, entity="ADA")["entities"] == []


def test_relation_type_filter(http: httpx.Client, kb: Kb) -> None:
    doc, (c0,) = kb.document("Ada knew Babbage and worked on his engine.")
    kb.store.write_chunk_graph(
        kb.id,
        doc,
        c0,
        graph(
            ["Ada", "Babbage", "Engine"],
            [("Ada", "KNEW", "Babbage"), ("Ada", "WORKED_ON", "Engine")],
        ),
    )

    knew = _search(http, kb.id, entity="Ada", relation_types=["KNEW"])
    both = _search(http, kb.id, entity="Ada", relation_types=["KNEW", "WORKED_ON"])
    wrong_case = _search(http, kb.id, entity="Ada", relation_types=["knew"])

    assert [r["type"] for r in knew["relations"]] == ["KNEW"]
    assert {e["name"] for e in knew["entities"]} == {"Ada", "Babbage"}
    assert sorted(r["type"] for r in both["relations"]) == ["KNEW", "WORKED_ON"]
    assert wrong_case["relations"] == [] and _matched(wrong_case) == ["Ada"]
    assert {e["name"] for e in wrong_case["entities"]} == {"Ada"}


def test_disabled_chunk_omits_what_depends_only_on_it(http: httpx.Client, kb: Kb) -> None:
    doc, (c0, c1) = kb.document("Grace Hopper designed COBOL; Grace Kelly; the Navy.", "Hopper.")
    kb.store.write_chunk_graph(
        kb.id,
        doc,
        c0,
        graph(
            ["Grace Hopper", "COBOL", "Grace Kelly", "Navy"],
            [("Grace Hopper", "DESIGNED", "COBOL")],
        ),
    )
    # Read again in c1, with a relation whose other end was only ever read in c0.
    kb.store.write_chunk_graph(
        kb.id, doc, c1, graph(["Grace Hopper"], [("Grace Hopper", "SERVED_IN", "Navy")])
    )
    before = _search(http, kb.id, entity="Grace")
    assert _matched(before) == ["Grace Kelly", "Grace Hopper"]
    assert sorted(r["type"] for r in before["relations"]) == ["DESIGNED", "SERVED_IN"]

    disabled = http.patch(f"/api/v1/chunks/{c0}", json={"enabled": False})
    assert disabled.status_code == 200, disabled.text
    assert disabled.json()["enabled"] is False
    after = _search(http, kb.id, entity="Grace")

    assert _matched(after) == ["Grace Hopper"]
    assert [e["name"] for e in after["entities"]] == ["Grace Hopper"]
    assert after["entities"][0]["chunks"] == [str(c1)]
    assert after["relations"] == []  # DESIGNED lost its chunk; SERVED_IN lost its Navy end
    assert [s["id"] for s in after["sources"]] == [str(c1)]
    # Enabled again, the chunk brings its entities and relations back without a new extraction.
    assert http.patch(f"/api/v1/chunks/{c0}", json={"enabled": True}).status_code == 200
    assert _search(http, kb.id, entity="Grace") == before


def test_deleted_document_omits_its_entities(http: httpx.Client, kb: Kb) -> None:
    doc_a, (a0,) = kb.document("Linus wrote a kernel.")
    doc_b, (b0,) = kb.document("Linus is a name in a comic.")
    kb.store.write_chunk_graph(
        kb.id, doc_a, a0, graph(["Linus", "Kernel"], [("Linus", "WROTE", "Kernel")])
    )
    kb.store.write_chunk_graph(kb.id, doc_b, b0, graph(["Linus"]))
    before = _search(http, kb.id, entity="Linus")
    assert sorted(e["knowledge_id"] for e in before["entities"] if e["matched"]) == sorted(
        [str(doc_a), str(doc_b)]
    )
    only_a = _search(http, kb.id, entity="Linus", knowledge_ids=[str(doc_a)])
    assert {e["knowledge_id"] for e in only_a["entities"]} == {str(doc_a)}

    deleted = http.delete(f"/api/v1/knowledge/{doc_a}")
    assert deleted.status_code == 202, deleted.text
    after = _search(http, kb.id, entity="Linus")

    assert [(e["name"], e["knowledge_id"]) for e in after["entities"]] == [("Linus", str(doc_b))]
    assert after["relations"] == []
    assert [s["id"] for s in after["sources"]] == [str(b0)]


def test_results_marker(http: httpx.Client, kb: Kb) -> None:
    doc, (c0,) = kb.document("Three Omegas.")
    kb.store.write_chunk_graph(kb.id, doc, c0, graph(["Omega", "Omega2", "Omega33"]))

    answer = _search(http, kb.id, entity="Omega", limit=2)
    full = _search(http, kb.id, entity="Omega", limit=3)

    assert _matched(answer) == ["Omega", "Omega2"]
    _no_marker(answer, "results")
    assert _matched(full) == ["Omega", "Omega2", "Omega33"]
    _no_marker(full)


def test_candidates_marker(http: httpx.Client, kb: Kb, settings: Settings) -> None:
    cap = settings.graph_search.candidate_cap
    doc, (c0,) = kb.document("Many candidates.")
    kb.store.write_chunk_graph(kb.id, doc, c0, graph([f"Cand{i:05d}" for i in range(cap + 1)]))

    answer = _search(http, kb.id, entity="Cand")

    assert len(_matched(answer)) == settings.graph_search.default_limit
    _no_marker(answer, "results", "candidates")


def test_relations_marker(http: httpx.Client, kb: Kb, settings: Settings) -> None:
    cap = settings.graph_search.max_relations
    spokes = [f"Spoke{i:05d}" for i in range(cap + 1)]
    doc, (c0,) = kb.document("A hub and its spokes.")
    kb.store.write_chunk_graph(
        kb.id, doc, c0, graph(["Hub", *spokes], [("Hub", "HAS", s) for s in spokes])
    )

    answer = _search(http, kb.id, entity="Hub")

    assert _matched(answer) == ["Hub"]
    assert len(answer["relations"]) == cap
    assert len(answer["entities"]) == cap + 1
    _no_marker(answer, "relations")


def test_sources_marker(http: httpx.Client, kb: Kb, settings: Settings) -> None:
    limits = settings.graph_search
    per_entity = limits.max_chunks_per_item
    entities = math.ceil((limits.max_sources + 1) / per_entity)
    doc, chunks = kb.document(*(f"text {i}" for i in range(entities * per_entity)))
    for i, chunk in enumerate(chunks):
        kb.store.write_chunk_graph(kb.id, doc, chunk, graph([f"Src{i % entities:03d}"]))

    answer = _search(http, kb.id, entity="Src")

    assert len(_matched(answer)) == entities
    assert all(len(e["chunks"]) == per_entity for e in answer["entities"])
    assert len(answer["sources"]) == limits.max_sources
    _no_marker(answer, "sources")


def test_field_markers(http: httpx.Client, kb: Kb, settings: Settings) -> None:
    limits = settings.graph_search
    long_name = "Longname " + "n" * limits.max_name_chars
    long_type = "T" * (limits.max_name_chars + 1)
    many = [f"attr {i}" for i in range(limits.max_attributes + 1)]
    long_attr = "a" * (limits.max_attribute_chars + 1)
    texts = ["x" * (limits.excerpt_chars + 1)] + [
        f"chunk {i}" for i in range(limits.max_chunks_per_item + 1)
    ]
    doc, chunks = kb.document(*texts)
    kb.store.write_chunk_graph(
        kb.id,
        doc,
        chunks[0],
        graph(
            [(long_name, []), ("Fieldy many", many), ("Fieldy long", [long_attr]), "Other"],
            [("Fieldy many", long_type, "Other")],
        ),
    )
    for chunk in chunks[1:]:
        kb.store.write_chunk_graph(kb.id, doc, chunk, graph(["Fieldy chunks"]))

    named = _search(http, kb.id, entity="Longname")
    fieldy = _search(http, kb.id, entity="Fieldy")

    [entity] = named["entities"]
    assert entity["name"] == long_name[: limits.max_name_chars] and entity["name_truncated"]
    [excerpt] = named["sources"]
    assert excerpt["excerpt"] == texts[0][: limits.excerpt_chars] and excerpt["excerpt_truncated"]
    _no_marker(named, "fields")
    by_name = {e["name"]: e for e in fieldy["entities"]}
    kept = by_name["Fieldy many"]["attributes"]  # the store keeps attributes as a set
    assert len(kept) == limits.max_attributes and set(kept) < set(many)
    assert by_name["Fieldy many"]["attributes_truncated"]
    assert by_name["Fieldy long"]["attributes"] == [long_attr[: limits.max_attribute_chars]]
    assert by_name["Fieldy long"]["attributes_truncated"]
    chunky = by_name["Fieldy chunks"]
    assert chunky["chunks_truncated"] and len(chunky["chunks"]) == limits.max_chunks_per_item
    [rel] = fieldy["relations"]
    assert rel["type"] == long_type[: limits.max_name_chars] and rel["type_truncated"]
    assert not by_name["Other"]["name_truncated"] and not by_name["Other"]["attributes_truncated"]
    _no_marker(fieldy, "fields")


def test_unknown_or_foreign_base_is_404(http: httpx.Client, kb: Kb) -> None:
    response = _post(http, uuid.uuid4(), {"entity": "Ada"})

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_base_without_graph_is_503_with_its_own_code(http: httpx.Client) -> None:
    plain = create_kb(http)

    response = _post(http, plain["id"], {"entity": "Ada"})

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "kb_graph_disabled"


def _bad_bodies(settings: Settings) -> list[Any]:
    limits = settings.graph_search
    return [
        {},
        {"entity": ""},
        {"entity": "   "},
        {"entity": 5},
        {"entity": "x" * (limits.max_entity_chars + 1)},
        {"entity": "Ada", "limit": 0},
        {"entity": "Ada", "limit": limits.max_limit + 1},
        {"entity": "Ada", "limit": "many"},
        {"entity": "Ada", "cypher": "MATCH (n) RETURN n"},
        {"entity": "Ada", "relation_types": []},
        {"entity": "Ada", "relation_types": [""]},
        {"entity": "Ada", "relation_types": ["R"] * (limits.max_relation_types + 1)},
        {"entity": "Ada", "knowledge_ids": []},
        {"entity": "Ada", "knowledge_ids": ["not-a-uuid"]},
        {"entity": "Ada", "knowledge_ids": [str(uuid.uuid4())] * (limits.max_knowledge_ids + 1)},
        ["Ada"],
    ]


def test_bad_input_is_422(http: httpx.Client, kb: Kb, settings: Settings) -> None:
    for body in _bad_bodies(settings):
        response = _post(http, kb.id, body)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["error"]["code"] == "invalid_input"
    assert _post(http, "not-a-uuid", {"entity": "Ada"}).status_code == 422
    raw = http.post(
        f"/api/v1/knowledge-bases/{kb.id}/graph-search",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert raw.status_code == 422


INJECTIONS = [
    "x' OR 1=1 //",
    'Ada" OR true //',
    "`) DETACH DELETE n //",
    "'}) MATCH (m) DETACH DELETE m //",
    "$entity",
    "\\u0027 OR 1=1",
]


def test_injection_strings_match_nothing(http: httpx.Client, kb: Kb) -> None:
    doc, (c0,) = kb.document("Ada knew Babbage.")
    kb.store.write_chunk_graph(
        kb.id, doc, c0, graph(["Ada", "Babbage"], [("Ada", "KNEW", "Babbage")])
    )

    for text in INJECTIONS:
        assert _search(http, kb.id, entity=text)["entities"] == [], text
        typed = _search(http, kb.id, entity="Ada", relation_types=[text, "KNEW` ]-() DELETE r //"])
        assert typed["relations"] == [] and _matched(typed) == ["Ada"], text

    intact = _search(http, kb.id, entity="Ada")
    assert [r["type"] for r in intact["relations"]] == ["KNEW"]


def test_graph_off_on_the_server_is_503(
    http: httpx.Client, kb: Kb, settings: Settings, auth_headers: dict[str, str]
) -> None:
    off = settings.model_copy(update={"neo4j": settings.neo4j.model_copy(update={"enable": False})})
    with (
        ThreadedServer(create_app(off)) as url,
        httpx.Client(base_url=url, timeout=30.0, headers=auth_headers) as client,
    ):
        response = _post(client, kb.id, {"entity": "Ada"})
        unknown = _post(client, uuid.uuid4(), {"entity": "Ada"})

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "graph_disabled"
    assert unknown.status_code == 503


def test_view_one_node_per_entity_with_its_documents(http: httpx.Client, kb: Kb) -> None:
    plant, people = one_entity_in_two_documents(kb)

    view = _view(http, kb.id, entity="Elin")

    by_name = {n["name"]: n for n in view["nodes"]}
    assert sorted(by_name) == ["Bergen", "Elin Brask", "Zorvath Industries"]
    elin = by_name["Elin Brask"]
    assert elin["matched"] is True and elin["key"] == "elin brask"
    assert sorted(elin["attributes"]) == ["beekeeper", "plant director"]
    docs = {d["knowledge_id"]: d for d in elin["documents"]}
    assert {kg: d["file_name"] for kg, d in docs.items()} == {
        str(plant): "plant.md",
        str(people): "people.txt",
    }
    assert all(len(d["entity_ids"]) == 1 and len(d["chunks"]) == 1 for d in docs.values())
    assert elin["id"] in [i for d in docs.values() for i in d["entity_ids"]]
    assert [d["file_name"] for d in by_name["Bergen"]["documents"]] == ["people.txt"]
    edges = {(e["source"], e["type"], e["target"]): e for e in view["edges"]}
    runs = edges[(elin["id"], "runs", by_name["Zorvath Industries"]["id"])]
    assert runs["count"] == 2 and len(runs["relation_ids"]) == 2 and len(runs["chunks"]) == 2
    assert edges[(elin["id"], "studied_in", by_name["Bergen"]["id"])]["count"] == 1
    assert len(edges) == 2
    # Every chunk named is described, as graph-search describes it.
    assert {s["id"] for s in view["sources"]} == {c for d in docs.values() for c in d["chunks"]}

    # The public graph-search answer is as before: one entity per (name, document).
    search = _search(http, kb.id, entity="Elin")
    assert [e["name"] for e in search["entities"] if e["matched"]] == ["Elin Brask", "Elin Brask"]
    assert len(search["relations"]) == 3


def test_view_with_a_document_filter_shows_its_nodes_only(http: httpx.Client, kb: Kb) -> None:
    plant, _ = one_entity_in_two_documents(kb)

    view = _view(http, kb.id, entity="Elin", knowledge_ids=[str(plant)])

    assert sorted(n["name"] for n in view["nodes"]) == ["Elin Brask", "Zorvath Industries"]
    for node in view["nodes"]:
        assert [(d["knowledge_id"], d["file_name"]) for d in node["documents"]] == [
            (str(plant), "plant.md")
        ]
    [runs] = view["edges"]
    assert (runs["type"], runs["count"]) == ("runs", 1)


def test_view_has_the_checks_of_graph_search(http: httpx.Client, kb: Kb) -> None:
    unknown = _post(http, uuid.uuid4(), {"entity": "A"}, "graph-view")
    assert unknown.status_code == 404, unknown.text
    blank = _post(http, kb.id, {"entity": " "}, "graph-view")
    assert blank.status_code == 422, blank.text
    assert blank.json()["error"]["code"] == "invalid_input"
