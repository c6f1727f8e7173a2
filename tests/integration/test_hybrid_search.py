"""Hybrid search on real services: API, worker with the real MiniLM, pgvector and full-text."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from graphrag.search.embeddings import build_embedder
from graphrag.search.models import KbScope, RetrievalRequest
from graphrag.search.retrieval import retrieve
from graphrag.settings import Settings
from tests.support.api_helpers import create_kb, upload, wait_terminal
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration

DOCS = {
    "turbine": "The Lindqvist turbine converts the river current into electricity for the "
    "valley villages. Engineers inspect its blades every spring.",
    "bakery": "Our sourdough loaves rise slowly overnight in a cool cellar, then bake in a "
    "wood-fired oven at dawn. The starter culture is fed with rye flour twice a day.",
    "comet": "The observatory catalogued a faint comet under the designation QX7729 during "
    "the winter survey of the northern sky.",
    "health": "Regular exercise and a balanced diet lower the risk of heart disease in adults.",
    "glacier": "The Vatnajokull glacier lost ice at a record pace, scientists from the Hofn "
    "station reported.",
    "volcano": "Mount Kerrigan, a dormant volcano, released a plume of ash over the Tullamore "
    "farms last week.",
}
OTHER_DOC = "The Lindqvist turbine also appears in this other base, about another river."


@dataclass(frozen=True)
class Corpus:
    kb_id: str
    docs: dict[str, str]  # name -> knowledge id
    other_kb_id: str
    other_doc: str


def _ingest(http: httpx.Client, kb_id: str, name: str, content: str) -> str:
    response = upload(http, kb_id, f"{name}.txt", content.encode(), "text/plain")
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


@pytest.fixture(scope="module")
def corpus(http_module: httpx.Client, worker: WorkerProcess) -> Corpus:
    kb = create_kb(http_module)
    # A second base that allows only vector search, holding the same rare words.
    other = create_kb(http_module, indexing={"vector": True, "keyword": False})
    docs = {name: _ingest(http_module, kb["id"], name, body) for name, body in DOCS.items()}
    other_doc = _ingest(http_module, other["id"], "other", OTHER_DOC)
    for doc_id in [*docs.values(), other_doc]:
        assert wait_terminal(http_module, doc_id)["parse_status"] == "completed"
    return Corpus(kb_id=kb["id"], docs=docs, other_kb_id=other["id"], other_doc=other_doc)


def _search(http: httpx.Client, kb_id: str, query: str, **options: Any) -> dict[str, Any]:
    response = http.post(
        f"/api/v1/knowledge-bases/{kb_id}/search", json={"query": query, **options}
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _doc_ids(body: dict[str, Any]) -> list[str]:
    return [hit["knowledge_id"] for hit in body["hits"]]


def test_paraphrase_is_found_by_vector(http: httpx.Client, corpus: Corpus) -> None:
    body = _search(http, corpus.kb_id, "What kind of bread is produced and how is it cooked?")
    assert body["vector_used"] and body["keyword_used"] and body["graph_used"] is False
    top = body["hits"][0]
    assert top["knowledge_id"] == corpus.docs["bakery"]
    assert top["match_type"] == "vector" and top["keyword_rank"] is None
    assert top["vector_rank"] == 1 and top["rank"] == 1
    assert top["file_name"] == "bakery.txt" and "sourdough" in top["content"]
    hydro = _search(http, corpus.kb_id, "hydroelectric power generated from a stream")
    assert hydro["hits"][0]["knowledge_id"] == corpus.docs["turbine"]


def test_rare_keyword_is_found_by_keyword(http: httpx.Client, corpus: Corpus) -> None:
    body = _search(http, corpus.kb_id, "QX7729", use_vector=False)
    assert body["vector_used"] is False and body["keyword_used"] is True
    assert _doc_ids(body) == [corpus.docs["comet"]]
    hit = body["hits"][0]
    assert hit["match_type"] == "keyword" and hit["keyword_rank"] == 1
    assert hit["keyword_score"] == pytest.approx(1.0)  # holds the whole weight of the query
    assert hit["vector_score"] is None
    both = _search(http, corpus.kb_id, "QX7729")
    comet = [h for h in both["hits"] if h["knowledge_id"] == corpus.docs["comet"]]
    assert comet and comet[0]["keyword_rank"] == 1


def test_chunk_found_by_both_is_hybrid_and_first(
    http: httpx.Client, corpus: Corpus, settings: Settings
) -> None:
    body = _search(http, corpus.kb_id, "Lindqvist turbine")
    top = body["hits"][0]
    assert top["knowledge_id"] == corpus.docs["turbine"]
    assert top["match_type"] == "hybrid"
    assert (top["vector_rank"], top["keyword_rank"], top["rank"]) == (1, 1, 1)
    fusion = settings.search
    rank_one = (fusion.vector_weight + fusion.keyword_weight) / (fusion.rrf_k + 1)
    assert top["score"] == pytest.approx(rank_one)
    assert [h["rank"] for h in body["hits"]] == list(range(1, len(body["hits"]) + 1))
    scores = [h["score"] for h in body["hits"]]
    assert scores == sorted(scores, reverse=True)
    assert {h["kb_id"] for h in body["hits"]} == {corpus.kb_id}  # the other base stays apart


def test_thresholds_cut(http: httpx.Client, corpus: Corpus) -> None:
    none_kw = _search(
        http, corpus.kb_id, "Lindqvist turbine", use_vector=False, keyword_threshold=1.0
    )
    assert none_kw["keyword_used"] and none_kw["hits"] == []
    none_vec = _search(
        http, corpus.kb_id, "Lindqvist turbine", use_keyword=False, vector_threshold=1.0
    )
    assert none_vec["vector_used"] and none_vec["hits"] == []
    loose = _search(http, corpus.kb_id, "river", use_keyword=False, vector_threshold=-1.0)
    strict = _search(http, corpus.kb_id, "river", use_keyword=False, vector_threshold=0.3)
    assert len(strict["hits"]) < len(loose["hits"])
    assert all(h["vector_score"] >= 0.3 for h in strict["hits"])


def test_top_k_is_respected(http: httpx.Client, corpus: Corpus) -> None:
    loose = {"vector_threshold": -1.0, "keyword_threshold": 0.0}
    body = _search(http, corpus.kb_id, "the", top_k=3, **loose)
    assert len(body["hits"]) == 3
    assert len(_search(http, corpus.kb_id, "the", top_k=1, **loose)["hits"]) == 1
    too_many = http.post(
        f"/api/v1/knowledge-bases/{corpus.kb_id}/search", json={"query": "the", "top_k": 10_000}
    )
    assert too_many.status_code == 422 and too_many.json()["error"]["code"] == "invalid_input"


def test_disabled_chunks_are_never_returned(http: httpx.Client, corpus: Corpus) -> None:
    glacier = corpus.docs["glacier"]
    assert glacier in _doc_ids(_search(http, corpus.kb_id, "Vatnajokull glacier"))
    chunks = http.get(f"/api/v1/knowledge/{glacier}/chunks").json()["items"]
    for chunk in chunks:
        response = http.patch(f"/api/v1/chunks/{chunk['id']}", json={"enabled": False})
        assert response.status_code == 200 and response.json()["enabled"] is False, response.text
    loose = {"vector_threshold": -1.0, "keyword_threshold": 0.0}
    for query in ("Vatnajokull glacier", "melting ice in Iceland"):
        assert glacier not in _doc_ids(_search(http, corpus.kb_id, query, **loose))
    for chunk in chunks:
        enabled = http.patch(f"/api/v1/chunks/{chunk['id']}", json={"enabled": True})
        assert enabled.status_code == 200, enabled.text
    assert glacier in _doc_ids(_search(http, corpus.kb_id, "Vatnajokull glacier"))


def test_chunk_update_refuses_bad_bodies_and_unknown_chunks(
    http: httpx.Client, corpus: Corpus
) -> None:
    chunk = http.get(f"/api/v1/knowledge/{corpus.docs['comet']}/chunks").json()["items"][0]
    for body in ({}, {"enabled": "maybe"}, {"enabled": True, "content": "x"}):
        bad = http.patch(f"/api/v1/chunks/{chunk['id']}", json=body)
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_input", body
    unknown = http.patch(f"/api/v1/chunks/{uuid.uuid4()}", json={"enabled": False})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"


def test_deleted_documents_are_never_returned(http: httpx.Client, corpus: Corpus) -> None:
    volcano = corpus.docs["volcano"]
    assert volcano in _doc_ids(_search(http, corpus.kb_id, "Kerrigan volcano"))
    assert http.delete(f"/api/v1/knowledge/{volcano}").status_code == 202
    loose = {"vector_threshold": -1.0, "keyword_threshold": 0.0}
    for query in ("Kerrigan volcano", "an eruption covered fields in ash"):
        assert volcano not in _doc_ids(_search(http, corpus.kb_id, query, **loose))


def test_knowledge_ids_restrict_the_documents(http: httpx.Client, corpus: Corpus) -> None:
    wanted = [corpus.docs["bakery"], corpus.docs["comet"]]
    loose = {"vector_threshold": -1.0, "keyword_threshold": 0.0}
    body = _search(http, corpus.kb_id, "the", knowledge_ids=wanted, **loose)
    assert set(_doc_ids(body)) == set(wanted)
    foreign = _search(http, corpus.kb_id, "Lindqvist", knowledge_ids=[corpus.other_doc], **loose)
    assert foreign["hits"] == []  # a document of another base gives nothing


def test_kb_indexing_strategy_limits_the_methods(http: httpx.Client, corpus: Corpus) -> None:
    body = _search(http, corpus.other_kb_id, "Lindqvist turbine")
    assert body["vector_used"] is True and body["keyword_used"] is False
    assert _doc_ids(body) == [corpus.other_doc]
    assert body["hits"][0]["match_type"] == "vector"


ODD_QUERIES = [
    '"',
    '"unclosed phrase',
    "&|!",
    "a & b | !c <-> d",
    "'; DROP TABLE chunks; --",
    "(((",
    "-",
    "turbine:*",
    "\\",
    "%_%",
    "or",
    "-turbine",
    "lindqvist " * 200,
    "日本語のテキスト検索",
    "emoji 🚀🔥 turbine",
    "Ünïcödé façade",
    "nul\x00byte",
    "\x00",
    "\ud800 lone surrogate",
    "",
    "   ",
    "x" * 2001,
]


@pytest.mark.parametrize("query", ODD_QUERIES)
def test_odd_queries_never_fail(http: httpx.Client, corpus: Corpus, query: str) -> None:
    # ASCII-escaped JSON, as browsers may send it: a lone surrogate reaches the server intact.
    response = http.post(
        f"/api/v1/knowledge-bases/{corpus.kb_id}/search",
        content=json.dumps({"query": query}),
        headers={"content-type": "application/json"},
    )
    assert response.status_code in (200, 422), response.text
    if response.status_code == 200:
        assert isinstance(response.json()["hits"], list)
    else:
        assert response.json()["error"]["code"] == "invalid_input"


def test_bad_requests_are_422(http: httpx.Client, corpus: Corpus) -> None:
    url = f"/api/v1/knowledge-bases/{corpus.kb_id}/search"
    bad_bodies: list[dict[str, Any]] = [
        {"query": ""},
        {"query": "x" * 2001},
        {"query": "ok", "top_k": 0},
        {"query": "ok", "vector_threshold": 2},
        {"query": "ok", "keyword_threshold": -0.1},
        {"query": "ok", "knowledge_ids": []},
        {"query": "ok", "knowledge_ids": ["not-a-uuid"]},
        {"query": "ok", "unknown": 1},
        {"query": "ok", "use_vector": False, "use_keyword": False, "use_graph": False},
        {},
    ]
    for body in bad_bodies:
        response = http.post(url, json=body)
        assert response.status_code == 422, (body, response.text)
    assert (
        http.post("/api/v1/knowledge-bases/not-a-uuid/search", json={"query": "x"}).status_code
        == 422
    )
    # The long string at the limit is accepted; the odd-query test shows the tables survive.
    assert http.post(url, json={"query": "lindqvist " * 200}).status_code == 200
    assert http.post(url, json={"query": "Lindqvist"}).json()["hits"]


def test_unknown_kb_is_404(http: httpx.Client, worker: WorkerProcess) -> None:
    response = http.post(f"/api/v1/knowledge-bases/{uuid.uuid4()}/search", json={"query": "x"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_retrieve_over_several_bases(
    corpus: Corpus, settings: Settings, db_session: Session
) -> None:
    embedder = build_embedder(settings.embedding)
    main, other = uuid.UUID(corpus.kb_id), uuid.UUID(corpus.other_kb_id)
    scopes = [
        KbScope(kb_id=main, vector=True, keyword=True, graph_on=False),
        KbScope(kb_id=other, vector=True, keyword=False, graph_on=True),
    ]
    request = RetrievalRequest(
        query="Lindqvist turbine",
        scopes=scopes,
        top_k=2,
        vector_threshold=0.2,
        keyword_threshold=0.3,
    )
    plain = retrieve(db_session, embedder, settings.search, request)
    assert {h.knowledge_id for h in plain.hits} == {
        uuid.UUID(corpus.docs["turbine"]),
        uuid.UUID(corpus.other_doc),
    }
    assert plain.graph_used is False and len(plain.hits) == 2
    assert plain.timings.embed_ms > 0 and plain.timings.vector_ms > 0
    assert plain.timings.keyword_ms > 0 and plain.timings.total_ms >= plain.timings.vector_ms
    # The HNSW scan settings hold for this transaction only.
    iterative = db_session.execute(text("SHOW hnsw.iterative_scan")).scalar_one()
    assert iterative == settings.search.hnsw_iterative_scan
    db_session.rollback()


def test_search_connections_plan_each_statement_for_its_values(
    db_session: Session, settings: Settings
) -> None:
    # A generic plan of the keyword search, made blind to the words, was four times slower.
    mode = db_session.execute(text("SHOW plan_cache_mode")).scalar_one()
    assert mode == settings.database.plan_cache_mode == "force_custom_plan"
