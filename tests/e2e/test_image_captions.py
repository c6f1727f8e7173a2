"""Image captions from a vision model: upload -> worker -> the scripted server's vision answer
-> `image_caption` chunks, searchable, never sent to graph extraction, within their budget."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from PIL import Image

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import all_chunks, create_kb, upload, wait_terminal
from tests.support.auth_helpers import bearer, make_key
from tests.support.graph_helpers import kb_graph_rule
from tests.support.http_server import ThreadedServer
from tests.support.isolated_worker import on_own_queues, own_database
from tests.support.sample_files import pdf_with_figure, png_with_text, tiff_frames
from tests.support.services import data_dir
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

VISION_MODEL = "scripted-vision"
CAPTION = "A bar chart of Quillmark harvest yields rising from 2019 to 2023."
MAX_TOKENS = 64
GRAPH_ON = {"indexing": {"graph_enabled": True}, "extract_config": {"enabled": True}}
OCR_WORDS = "Quillmark ledger"


@dataclass
class _Stack:
    http: httpx.Client
    llm: ScriptedLlmServer


@pytest.fixture()
def stack(
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    fresh_scripted_llm: ScriptedLlmServer,
) -> Iterator[_Stack]:
    """An API and a worker of their own, with a vision model and one caption per document."""
    from api.app import create_app
    from workers.celery_app import create_celery

    moved, env = on_own_queues(settings, settings_env)
    vision = {"vision_model": VISION_MODEL, "caption_max_images": 1, "caption_max_tokens": 64}
    moved = moved.model_copy(update={"ingest": moved.ingest.model_copy(update=vision)})
    env = {
        **env,
        "INGEST_VISION_MODEL": VISION_MODEL,
        "INGEST_CAPTION_MAX_IMAGES": "1",
        "INGEST_CAPTION_MAX_TOKENS": str(MAX_TOKENS),
    }
    with own_database(services_env["DATABASE_URL"], moved, env) as (own, env, sessions):
        key = make_key(sessions, own, own.api.default_tenant, list(Capability)).key
        worker = WorkerProcess(env, data_dir() / "test-logs" / "worker-captions.log")
        worker.start(create_celery(own))
        try:
            with (
                ThreadedServer(create_app(own)) as url,
                httpx.Client(base_url=url, headers=bearer(key), timeout=30.0) as http,
            ):
                yield _Stack(http, fresh_scripted_llm)
        finally:
            worker.stop()


def _script(llm: ScriptedLlmServer, vision_fault: dict[str, Any] | None = None) -> None:
    vision: dict[str, Any] = {"match": {"image": True}, "reply": {"content": f"  {CAPTION}\n"}}
    if vision_fault is not None:
        vision["fault"] = vision_fault
    extraction = kb_graph_rule("Quillmark", [{"name": "Quillmark", "attributes": []}], [])
    llm.set_rules([vision, extraction], default={"content": "no entities here"})


def _ingest(http: httpx.Client, kb_id: str, name: str, data: bytes) -> dict[str, Any]:
    response = upload(http, kb_id, name, data)
    assert response.status_code == 202, response.text
    doc = wait_terminal(http, response.json()["id"])
    assert doc["parse_status"] == "completed", doc
    return doc


def _chat_bodies(llm: ScriptedLlmServer) -> list[dict[str, Any]]:
    bodies = [r.body for r in llm.requests("/v1/chat/completions")]
    return [b for b in bodies if isinstance(b, dict)]


def _last_content(body: dict[str, Any]) -> Any:
    return body["messages"][-1]["content"]


def _vision_requests(llm: ScriptedLlmServer) -> list[dict[str, Any]]:
    return [b for b in _chat_bodies(llm) if isinstance(_last_content(b), list)]


def _extraction_prompts(llm: ScriptedLlmServer) -> list[str]:
    return [c for b in _chat_bodies(llm) if isinstance(c := _last_content(b), str)]


def test_an_uploaded_image_gets_a_caption_chunk_kept_out_of_the_graph(stack: _Stack) -> None:
    _script(stack.llm)
    kb = create_kb(stack.http, **GRAPH_ON)
    png = png_with_text([OCR_WORDS])
    doc = _ingest(stack.http, kb["id"], "chart.png", png)

    chunks = all_chunks(stack.http, doc["id"])
    by_type = {c["chunk_type"]: c for c in chunks}
    assert sorted(c["chunk_type"] for c in chunks) == ["image_caption", "image_ocr", "text"]
    caption = by_type["image_caption"]
    assert caption["content"] == CAPTION  # trimmed
    assert caption["parent_chunk_id"] == by_type["text"]["id"]
    assert caption["graph_status"] == "skipped"
    assert by_type["image_ocr"]["graph_status"] == "done"  # the OCR of a page without text
    assert doc["stats"]["images_captioned"] == 1

    [request] = _vision_requests(stack.llm)
    assert request["model"] == VISION_MODEL and request["max_tokens"] == MAX_TOKENS
    image_part = request["messages"][-1]["content"][1]["image_url"]["url"]
    head, _, payload = image_part.partition(",")
    assert head == "data:image/png;base64"
    with Image.open(io.BytesIO(base64.b64decode(payload))) as sent:
        assert sent.format == "PNG" and sent.width > 0
    prompts = _extraction_prompts(stack.llm)
    assert prompts and all(CAPTION not in p for p in prompts)  # captions never reach extraction

    search = stack.http.post(
        f"/api/v1/knowledge-bases/{kb['id']}/search", json={"query": "harvest yields bar chart"}
    )
    assert search.status_code == 200, search.text
    assert caption["id"] in [h["chunk_id"] for h in search.json()["hits"]]


def test_a_pdf_figure_is_captioned_and_the_budget_holds(stack: _Stack) -> None:
    _script(stack.llm)
    kb = create_kb(stack.http)
    figure = png_with_text(["Figure 1"])
    pdf = _ingest(stack.http, kb["id"], "report.pdf", pdf_with_figure("The yearly report.", figure))
    pdf_chunks = all_chunks(stack.http, pdf["id"])
    assert [c["content"] for c in pdf_chunks if c["chunk_type"] == "image_caption"] == [CAPTION]

    tiff = _ingest(stack.http, kb["id"], "frames.tiff", tiff_frames(3, size=96))
    captions = [c for c in all_chunks(stack.http, tiff["id"]) if c["chunk_type"] == "image_caption"]
    assert [(c["page"], c["content"]) for c in captions] == [(1, CAPTION)]
    assert tiff["stats"]["images_captioned"] == 1 and tiff["stats"]["captions_skipped"] == 2
    assert len(_vision_requests(stack.llm)) == 2  # one for the PDF's figure, one for the TIFF


def test_a_failing_vision_model_leaves_the_document_whole(stack: _Stack) -> None:
    _script(stack.llm, vision_fault={"status": 500})
    kb = create_kb(stack.http)
    doc = _ingest(stack.http, kb["id"], "chart.png", png_with_text([OCR_WORDS]))

    types = sorted(c["chunk_type"] for c in all_chunks(stack.http, doc["id"]))
    assert types == ["image_ocr", "text"]
    assert doc["stats"]["captions_failed"] == 1 and doc["stats"]["images_captioned"] == 0
