"""Every supported format through the real API, queue, worker, tesseract and PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.support import sample_files
from tests.support.api_helpers import all_chunks, create_kb, upload, wait_terminal
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def kb(http_module: httpx.Client, worker: WorkerProcess) -> dict[str, Any]:
    return create_kb(
        http_module,
        chunking={"chunk_size": 300, "chunk_overlap": 40, "separators": ["\n\n", "\n", ". ", " "]},
    )


def _ingest(
    http: httpx.Client, kb_id: str, name: str, data: bytes
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    response = upload(http, kb_id, name, data)
    assert response.status_code == 202, response.text
    doc = wait_terminal(http, response.json()["id"])
    assert doc["parse_status"] == "completed", doc
    return doc, all_chunks(http, doc["id"])


def test_text_pdf_keeps_pages_and_order(http: httpx.Client, kb: dict[str, Any]) -> None:
    pages = [
        "Alpha page talks about the Lindqvist turbine.",
        "Beta page describes the Okonkwo bridge in detail.",
    ]
    doc, chunks = _ingest(http, kb["id"], "report.pdf", sample_files.text_pdf(pages))
    assert doc["page_count"] == 2
    by_page = {c["page"]: c["content"] for c in chunks if c["chunk_type"] == "text"}
    assert "Lindqvist turbine" in by_page[1]
    assert "Okonkwo bridge" in by_page[2]
    assert [c["seq"] for c in chunks] == list(range(len(chunks)))


def test_scanned_pdf_is_ocrd_into_sub_chunks(http: httpx.Client, kb: dict[str, Any]) -> None:
    data = sample_files.scanned_pdf([["ZEPHYR QUARTZ", "lantern harbour 1987"]])
    doc, chunks = _ingest(http, kb["id"], "scan.pdf", data)
    ocr = [c for c in chunks if c["chunk_type"] == "image_ocr"]
    assert ocr, chunks
    text = " ".join(c["content"] for c in ocr).lower()
    assert "zephyr" in text and "quartz" in text and "lantern" in text
    parents = {c["id"]: c for c in chunks if c["chunk_type"] == "text"}
    for chunk in ocr:
        parent = parents[chunk["parent_chunk_id"]]
        assert parent["content"].strip() == ""
        assert parent["page"] == chunk["page"] == 1
    assert doc["stats"]["scanned_pages"] == [1]


def test_mixed_pdf(http: httpx.Client, kb: dict[str, Any]) -> None:
    data = sample_files.mixed_pdf("The Varga observatory opened in 1902.", ["MOSAIC FALCON"])
    _, chunks = _ingest(http, kb["id"], "mixed.pdf", data)
    texts = [c for c in chunks if c["chunk_type"] == "text" and c["content"].strip()]
    ocr = [c for c in chunks if c["chunk_type"] == "image_ocr"]
    assert texts[0]["page"] == 1 and "Varga observatory" in texts[0]["content"]
    assert any("FALCON" in c["content"].upper() and c["page"] == 2 for c in ocr)


def test_docx_paragraphs_and_tables(http: httpx.Client, kb: dict[str, Any]) -> None:
    data = sample_files.docx_file(
        ["The Ibarra contract was signed in Bilbao."],
        table=[["Party", "Role"], ["Ibarra Steel", "Supplier"]],
    )
    _, chunks = _ingest(http, kb["id"], "contract.docx", data)
    joined = " ".join(c["content"] for c in chunks)
    assert "Ibarra contract" in joined and "Supplier" in joined


def test_html_without_scripts(http: httpx.Client, kb: dict[str, Any]) -> None:
    data = sample_files.html_file("Tanaka garden", "The Tanaka garden has a stone lantern.")
    _, chunks = _ingest(http, kb["id"], "garden.html", data)
    joined = " ".join(c["content"] for c in chunks)
    assert "stone lantern" in joined
    assert "do not index" not in joined and "color: red" not in joined


def test_png_is_ocrd(http: httpx.Client, kb: dict[str, Any]) -> None:
    data = sample_files.png_with_text(["COBALT MERIDIAN"])
    _, chunks = _ingest(http, kb["id"], "photo.png", data)
    assert "COBALT" in " ".join(c["content"] for c in chunks).upper()


def test_markdown_chunks_respect_the_kb_config(http: httpx.Client, kb: dict[str, Any]) -> None:
    paragraphs = [
        f"Paragraph {i} is about the harbour number {i} and its cranes." * 3 for i in range(12)
    ]
    data = "\n\n".join(paragraphs).encode()
    doc, chunks = _ingest(http, kb["id"], "notes.md", data)
    assert doc["chunk_count"] == len(chunks) > 3
    assert all(len(c["content"]) <= 300 for c in chunks)
    stages = http.get(f"/api/v1/knowledge/{doc['id']}/stages").json()
    assert stages["stages"]["parse"]["status"] == "done"
    assert stages["stages"]["embed"]["done"] == len(chunks)
    assert stages["stages"]["graph"]["status"] == "skipped"


def test_text_and_listing(http: httpx.Client, kb: dict[str, Any]) -> None:
    response = http.post(
        f"/api/v1/knowledge-bases/{kb['id']}/knowledge/text",
        json={"title": "memo", "content": "The Aldana memo is short."},
    )
    assert response.status_code == 202, response.text
    doc = wait_terminal(http, response.json()["id"])
    assert doc["source"] == "text" and doc["parse_status"] == "completed"
    listed = http.get(
        f"/api/v1/knowledge-bases/{kb['id']}/knowledge",
        params={"status": "completed", "page_size": 2},
    ).json()
    assert listed["page_size"] == 2 and len(listed["items"]) == 2
    assert listed["total"] >= 2
    assert all(item["parse_status"] == "completed" for item in listed["items"])
