"""Slots, both sides: the scripted server holds requests in its slots and reports them on
`/props`; the client reads them (`auto`) and reports each call's usage and latency."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from prometheus_client import REGISTRY

from graphrag.llm.client import LlmClient
from graphrag.llm.messages import ChatMessage
from graphrag.llm.server_info import read_server_info, server_root, slot_limit
from graphrag.metrics import llm_metrics
from graphrag.settings import LlmSettings, get_settings
from tests.fakes.scripted_llm import ScriptedLlmServer

pytestmark = pytest.mark.unit

SLOTS = 2
HOLD_S = 0.3
CALLERS = 5
MODEL = "slot-model"


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedLlmServer]:
    with ScriptedLlmServer() as running:
        yield running


@pytest.fixture
def llm(server: ScriptedLlmServer) -> ScriptedLlmServer:
    server.reset()
    return server


def _llm_settings(base_url: str, limit: int | str = "auto") -> LlmSettings:
    update = {"base_url": base_url, "model": MODEL, "concurrency_limit": limit}
    return get_settings().llm.model_copy(update=update)


def _chat(url: str) -> int:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hello there"}]}
    return httpx.post(f"{url}/v1/chat/completions", json=body, timeout=10.0).status_code


def test_server_serves_at_most_its_slots_and_measures_what_arrived(
    llm: ScriptedLlmServer,
) -> None:
    llm.set_script({"slots": SLOTS, "latency_s": HOLD_S})
    with ThreadPoolExecutor(CALLERS) as pool:
        codes = list(pool.map(_chat, [llm.url] * CALLERS))
    stats = llm.slot_stats()
    assert codes == [200] * CALLERS
    assert stats.calls == CALLERS
    assert stats.peak_active == SLOTS
    assert stats.peak_received == CALLERS
    assert stats.received == stats.active == 0
    # Five calls of 0.3 s through two slots: three rounds, the slots busy 1.5 s of about 0.9 s.
    assert stats.busy_s == pytest.approx(CALLERS * HOLD_S, rel=0.2)
    assert 1.2 < stats.mean_active <= SLOTS


def test_props_reports_the_slots_or_is_absent(llm: ScriptedLlmServer) -> None:
    assert httpx.get(f"{llm.url}/props").status_code == 404
    llm.set_script({"slots": 3})
    assert httpx.get(f"{llm.url}/props").json()["total_slots"] == 3


def test_auto_limit_reads_the_server_else_falls_back(llm: ScriptedLlmServer) -> None:
    settings = _llm_settings(llm.openai_base_url)
    assert slot_limit(settings) == settings.concurrency_fallback
    llm.set_script({"slots": 6, "models": [MODEL]})
    info = read_server_info(settings)
    assert (info.reachable, info.total_slots, info.model) == (True, 6, MODEL)
    assert slot_limit(settings) == 6
    assert slot_limit(_llm_settings(llm.openai_base_url, 3)) == 3
    unreachable = _llm_settings("http://127.0.0.1:9/v1")
    assert not read_server_info(unreachable).reachable
    assert slot_limit(unreachable) == unreachable.concurrency_fallback


def test_server_root_drops_the_api_suffix() -> None:
    assert server_root("http://h:8088/v1") == "http://h:8088"
    assert server_root("http://h:8088/v1/") == "http://h:8088"
    assert server_root("http://h:8088") == "http://h:8088"


def test_reply_carries_usage_and_latency_into_the_metrics(llm: ScriptedLlmServer) -> None:
    llm.set_script({"latency_s": 0.1, "default": {"content": "two words"}})
    metrics = llm_metrics(get_settings().metrics.llm_latency_buckets_s)
    client = LlmClient(_llm_settings(llm.openai_base_url), metrics=metrics)

    def sample(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, {"model": MODEL, **labels}) or 0.0

    before = sample("graphrag_llm_tokens_total", kind="prompt")
    count_before = sample("graphrag_llm_request_seconds_count")
    reply = client.complete([ChatMessage(role="user", content="one two three")])
    recorded = llm.requests("/v1/chat/completions")[-1].usage
    assert recorded is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (
        recorded["prompt_tokens"],
        recorded["completion_tokens"],
    )
    assert reply.usage.completion_tokens == 2 and reply.seconds >= 0.1
    assert sample("graphrag_llm_tokens_total", kind="prompt") - before == reply.usage.prompt_tokens
    assert sample("graphrag_llm_request_seconds_count") - count_before == 1
    assert sample("graphrag_llm_requests_total", outcome="ok") >= 1
