"""A small document uploaded after a large one does not wait for the large one's graph: the relay
keeps a bounded number of graph tasks in flight and picks them round-robin across documents."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb, upload, wait_terminal
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

BIG_CHUNKS = 80
SMALL_CHUNKS = 2
LLM_DELAY_S = 0.5  # each extraction call: the large document outlasts the small one's parse
CHUNKING = {"chunk_size": 80, "chunk_overlap": 0, "separators": ["\n\n"]}
WAIT_S = 120.0


def _text(prefix: str, paragraphs: int) -> bytes:
    # Each paragraph is over half the chunk size, so each one is a chunk of its own.
    return "\n\n".join(
        f"{prefix} paragraph {i:03d} has words enough to fill a chunk." for i in range(paragraphs)
    ).encode()


def _doc(http: httpx.Client, doc_id: str) -> dict[str, Any]:
    body: dict[str, Any] = http.get(f"/api/v1/knowledge/{doc_id}").json()
    return body


@pytest.mark.xfail(
    reason="the session worker consumes docparse and graph from one prefork pool: prefetched "
    "graph tasks hold the small document's parse back on an idle machine (seen in CI runs)",
    strict=False,
)
def test_small_document_finishes_while_the_large_one_still_extracts(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    settings: Settings,
) -> None:
    fresh_scripted_llm.set_rules(
        [{"name": "slow", "reply": {"content": "no entities"}, "fault": {"delay_s": LLM_DELAY_S}}]
    )
    kb = create_kb(
        http,
        chunking=CHUNKING,
        indexing={"graph_enabled": True},
        extract_config={"enabled": True, "tags": ["knows"]},
    )
    big = upload(http, kb["id"], "big.md", _text("big", BIG_CHUNKS)).json()["id"]
    deadline = time.monotonic() + WAIT_S
    while _doc(http, big)["parse_status"] != "finalizing":
        assert time.monotonic() < deadline, "the large document never reached the graph stage"
        time.sleep(0.05)
    small = upload(http, kb["id"], "small.md", _text("small", SMALL_CHUNKS)).json()["id"]

    done = wait_terminal(http, small, timeout_s=WAIT_S)
    big_then = _doc(http, big)
    assert done["parse_status"] == "completed"
    assert done["chunk_count"] == SMALL_CHUNKS
    # In first-come order the small one would wait for every chunk of the large one (the large
    # one would be completed by now); fairly, it waits for the graph tasks already in flight
    # when its own were written, a few rounds of `outbox.graph_in_flight`, not the whole queue.
    assert big_then["parse_status"] == "finalizing"
    assert settings.outbox.graph_in_flight < BIG_CHUNKS // 4
    assert big_then["pending_subtasks_count"] >= BIG_CHUNKS // 4
    finished = wait_terminal(http, big, timeout_s=WAIT_S)
    assert finished["parse_status"] == "completed" and finished["failed_chunk_count"] == 0
