"""A base's own configuration is held to the caps on create and on update: chunking bounds
(chunk size, separator count and length) and the extraction-config caps (tags, example text,
guidance, the example's nodes, relations and name lengths), each a clean 422."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from graphrag.settings import Settings
from tests.support.api_helpers import create_kb

pytestmark = pytest.mark.integration


def _chunking(**fields: Any) -> dict[str, Any]:
    return {"chunk_size": 512, "chunk_overlap": 0, "separators": ["\n\n"], **fields}


def _refused(response: httpx.Response, words: str) -> None:
    assert response.status_code == 422, response.text
    body = response.json()["error"]
    # A cap checked by the service is named in the message; a list's count, checked while the
    # body is validated (before its items), in the one error listed.
    listed = [
        " ".join(map(str, e["loc"])) + " " + e["msg"] for e in body["details"].get("errors", [])
    ]
    assert body["code"] == "invalid_input", body
    assert words in body["message"] or (len(listed) == 1 and words in listed[0]), body


def _cases(settings: Settings) -> list[tuple[dict[str, Any], str]]:
    ingest, extraction = settings.ingest, settings.extraction
    return [
        ({"chunking": _chunking(chunk_size=1)}, "chunk_size between"),
        ({"chunking": _chunking(chunk_size=ingest.chunk_size_max + 1)}, "chunk_size between"),
        (
            {
                "chunking": _chunking(
                    separators=[f"<{i}>" for i in range(ingest.max_separators + 1)]
                )
            },
            "separators",
        ),
        (
            {"chunking": _chunking(separators=["=" * (ingest.max_separator_chars + 1)])},
            "characters",
        ),
        (
            {"extract_config": {"tags": [f"tag{i}" for i in range(extraction.max_tags + 1)]}},
            "tags",
        ),
        (
            {"extract_config": {"text": "x" * (extraction.max_example_text_chars + 1)}},
            "example text",
        ),
        (
            {
                "extract_config": {
                    "custom_instructions": "y" * (extraction.max_custom_instructions_chars + 1)
                }
            },
            "custom instructions",
        ),
        (
            {"extract_config": _example(nodes=extraction.max_nodes_per_chunk + 1)},
            "nodes",
        ),
        (
            {"extract_config": _example(relations=extraction.max_relations_per_chunk + 1)},
            "relations",
        ),
        (
            {"extract_config": _example(name_chars=extraction.max_name_chars + 1)},
            "names and tags",
        ),
        (
            {"extract_config": _example(type_chars=extraction.max_name_chars + 1)},
            "names and tags",
        ),
    ]


def _example(
    nodes: int = 1, relations: int = 1, name_chars: int = 1, type_chars: int = 1
) -> dict[str, Any]:
    """A few-shot example of `nodes` nodes and `relations` relations; the first node's name and
    the relations' type are `name_chars` and `type_chars` long."""
    names = ["n" * name_chars] + [f"node {i}" for i in range(1, nodes)]
    return {
        "text": "An example.",
        "nodes": [{"name": name} for name in names],
        "relations": [
            {"node1": names[0], "node2": f"other {i}", "type": "t" * type_chars}
            for i in range(relations)
        ],
    }


def test_create_refuses_configs_over_the_caps(http: httpx.Client, settings: Settings) -> None:
    for fields, words in _cases(settings):
        _refused(http.post("/api/v1/knowledge-bases", json={"name": "over", **fields}), words)
    names = [kb["name"] for kb in http.get("/api/v1/knowledge-bases").json()]
    assert "over" not in names  # nothing half-created


def test_update_refuses_configs_over_the_caps(http: httpx.Client, settings: Settings) -> None:
    kb = create_kb(http, chunking=_chunking(chunk_size=300))
    for fields, words in _cases(settings):
        _refused(http.patch(f"/api/v1/knowledge-bases/{kb['id']}", json=fields), words)
    after = http.get(f"/api/v1/knowledge-bases/{kb['id']}").json()
    assert after["chunking"]["chunk_size"] == 300 and after["extract_config"]["tags"] == []
    # The bounds themselves are accepted.
    edge = _chunking(chunk_size=settings.ingest.chunk_size_min)
    assert http.patch(f"/api/v1/knowledge-bases/{kb['id']}", json={"chunking": edge}).is_success
    extraction = settings.extraction
    full = _example(
        nodes=extraction.max_nodes_per_chunk,
        relations=extraction.max_relations_per_chunk,
        name_chars=extraction.max_name_chars,
        type_chars=extraction.max_name_chars,
    )
    patched = http.patch(f"/api/v1/knowledge-bases/{kb['id']}", json={"extract_config": full})
    assert patched.is_success, patched.text
    stored = patched.json()["extract_config"]
    assert len(stored["nodes"]) == extraction.max_nodes_per_chunk
    assert len(stored["relations"]) == extraction.max_relations_per_chunk
