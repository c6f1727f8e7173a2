"""The scripted OpenAI-compatible server, driven through the real `openai` client and httpx."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import openai
import pytest
from pydantic import ValidationError

from tests.fakes.llm_script import DEFAULT_EMBEDDING_DIM, Rule, Script
from tests.fakes.scripted_llm import ScriptedLlmServer

pytestmark = pytest.mark.unit

REPO_ROOT = Path(__file__).resolve().parents[2]
SHORT_TIMEOUT_S = 0.3
CLI_START_TIMEOUT_S = 20.0
USER = "user"


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedLlmServer]:
    with ScriptedLlmServer() as running:
        yield running


@pytest.fixture
def llm(server: ScriptedLlmServer) -> ScriptedLlmServer:
    server.reset()
    return server


@pytest.fixture
def client(llm: ScriptedLlmServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=llm.openai_base_url, api_key="test", max_retries=0) as c:
        yield c


@pytest.fixture
def http(llm: ScriptedLlmServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=llm.url) as c:
        yield c


def ask(client: openai.OpenAI, text: str, **kwargs: Any) -> Any:
    messages: list[Any] = [{"role": USER, "content": text}]
    if "system" in kwargs:
        messages.insert(0, {"role": "system", "content": kwargs.pop("system")})
    return client.chat.completions.create(
        model=kwargs.pop("model", "m"), messages=messages, **kwargs
    )


def test_default_reply_is_plain_text(client: openai.OpenAI) -> None:
    answer = ask(client, "hello")
    assert answer.choices[0].message.content == "OK"
    assert answer.choices[0].finish_reason == "stop"
    assert answer.model == "m"


def test_first_matching_rule_wins(llm: ScriptedLlmServer, client: openai.OpenAI) -> None:
    llm.set_rules(
        [
            {"match": {"user": {"contains": "capital"}}, "reply": {"content": "Paris"}},
            {"match": {"user": {"regex": r"capital|city"}}, "reply": {"content": "never"}},
            {"match": {"system": {"regex": r"^You extract"}}, "reply": {"content": "extractor"}},
            {"match": {"model": {"contains": "gemma"}}, "reply": {"content": "gemma says"}},
        ],
        default={"content": "fallback"},
    )
    assert ask(client, "the capital of France?").choices[0].message.content == "Paris"
    assert ask(client, "a big city").choices[0].message.content == "never"
    assert ask(client, "x", system="You extract entities").choices[0].message.content == (
        "extractor"
    )
    assert ask(client, "x", model="gemma3-270m").choices[0].message.content == "gemma says"
    assert ask(client, "nothing matches").choices[0].message.content == "fallback"


def _vision(client: openai.OpenAI, url: str) -> Any:
    content = [
        {"type": "text", "text": "Describe this image"},
        {"type": "image_url", "image_url": {"url": url}},
    ]
    messages: list[Any] = [{"role": USER, "content": content}]
    return client.chat.completions.create(model="vision", messages=messages)


def test_vision_requests_are_matched_and_their_images_checked(
    llm: ScriptedLlmServer, client: openai.OpenAI
) -> None:
    llm.set_rules(
        [{"match": {"image": True}, "reply": {"content": "A bar chart of sales"}}],
        default={"content": "no image"},
    )
    png = "data:image/png;base64," + base64.b64encode(b"\x89PNG fake bytes").decode()

    assert _vision(client, png).choices[0].message.content == "A bar chart of sales"
    assert ask(client, "Describe this image").choices[0].message.content == "no image"
    for bad in ("https://example.org/cat.png", "data:image/png;base64,@@@", "data:text/plain,x"):
        with pytest.raises(openai.BadRequestError):
            _vision(client, bad)


def test_json_reply_is_sent_as_text(llm: ScriptedLlmServer, client: openai.OpenAI) -> None:
    graph = {"nodes": [{"id": "a", "label": "Person"}], "relations": []}
    llm.set_rules([{"reply": {"content": graph}}])
    assert json.loads(ask(client, "extract").choices[0].message.content) == graph


def test_stream_chunks_rebuild_the_reply(llm: ScriptedLlmServer, client: openai.OpenAI) -> None:
    text = "A streamed answer that spans several chunks."
    llm.set_rules([{"reply": {"content": text}}])
    chunks = list(ask(client, "go", stream=True, stream_options={"include_usage": True}))
    pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    assert len(pieces) > 2
    assert "".join(pieces) == text
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None
    # The log keeps what the stream reported, as it does for a whole completion.
    reported = chunks[-1].usage
    assert llm.requests("/v1/chat/completions")[-1].usage == {
        "prompt_tokens": reported.prompt_tokens,
        "completion_tokens": reported.completion_tokens,
        "total_tokens": reported.total_tokens,
    }


def test_stream_ends_with_done_marker(http: httpx.Client) -> None:
    body = {"model": "m", "stream": True, "messages": [{"role": USER, "content": "hi"}]}
    with http.stream("POST", "/v1/chat/completions", json=body) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = [line for line in response.iter_lines() if line]
    assert all(line.startswith("data: ") for line in events)
    assert events[-1] == "data: [DONE]"


def test_tool_calls(llm: ScriptedLlmServer, client: openai.OpenAI) -> None:
    call = {"name": "search_graph", "arguments": {"query": "Ada", "k": 3}}
    llm.set_rules([{"reply": {"tool_calls": [call]}}])
    answer = ask(client, "who is Ada?")
    assert answer.choices[0].finish_reason == "tool_calls"
    [made] = answer.choices[0].message.tool_calls
    assert made.function.name == "search_graph"
    assert json.loads(made.function.arguments) == {"query": "Ada", "k": 3}

    streamed = list(ask(client, "who is Ada?", stream=True))
    fragments = [c.choices[0].delta.tool_calls or [] for c in streamed if c.choices]
    arguments = "".join(f.function.arguments or "" for frags in fragments for f in frags)
    assert json.loads(arguments) == {"query": "Ada", "k": 3}
    assert streamed[-1].choices[0].finish_reason == "tool_calls"


def test_malformed_json_breaks_the_client(llm: ScriptedLlmServer, client: openai.OpenAI) -> None:
    llm.set_rules([{"fault": {"malformed_json": True}}])
    with pytest.raises(json.JSONDecodeError):
        ask(client, "hi")
    with pytest.raises(json.JSONDecodeError):
        list(ask(client, "hi", stream=True))


def test_truncate_cuts_content_with_length_reason(
    llm: ScriptedLlmServer, client: openai.OpenAI
) -> None:
    llm.set_rules([{"reply": {"content": '{"nodes": [1, 2, 3]}'}, "fault": {"truncate": 9}}])
    answer = ask(client, "hi")
    assert answer.choices[0].message.content == '{"nodes":'
    assert answer.choices[0].finish_reason == "length"


def test_delay_makes_the_client_time_out(llm: ScriptedLlmServer, client: openai.OpenAI) -> None:
    llm.set_rules([{"fault": {"delay_s": SHORT_TIMEOUT_S * 4}}])
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        ask(client, "hi", timeout=SHORT_TIMEOUT_S)
    assert time.monotonic() - started < SHORT_TIMEOUT_S * 3


def test_piece_delay_paces_a_stream_under_the_read_timeout(
    llm: ScriptedLlmServer, client: openai.OpenAI
) -> None:
    """Each event comes `piece_delay_s` after the last: the whole stream outlasts a read
    timeout that no single wait reaches."""
    pause_s = SHORT_TIMEOUT_S / 3
    llm.set_rules([{"reply": {"content": "abcdefghijkl" * 4}, "fault": {"piece_delay_s": pause_s}}])
    started = time.monotonic()
    chunks = list(ask(client, "hi", stream=True, timeout=SHORT_TIMEOUT_S))
    elapsed = time.monotonic() - started
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "abcdefghijkl" * 4
    assert elapsed >= len(chunks) * pause_s > SHORT_TIMEOUT_S


def test_status_fault_raises_server_error(llm: ScriptedLlmServer, client: openai.OpenAI) -> None:
    llm.set_rules([{"name": "boom", "fault": {"status": 500}}])
    with pytest.raises(openai.InternalServerError) as caught:
        ask(client, "hi")
    assert caught.value.status_code == 500
    assert "boom" in caught.value.message


def test_context_overflow_is_llama_cpps_400(llm: ScriptedLlmServer, client: openai.OpenAI) -> None:
    llm.set_rules([{"fault": {"context_overflow": True, "context_tokens": 512}}])
    for stream in (False, True):
        with pytest.raises(openai.BadRequestError) as caught:
            ask(client, "one two three", stream=stream)
        assert caught.value.status_code == 400
        error = caught.value.body
        assert isinstance(error, dict) and error["type"] == "exceed_context_size_error"
        assert error["n_ctx"] == 512 and error["n_prompt_tokens"] == 3
        assert "exceeds the available context size" in caught.value.message


def test_dropped_connection_is_a_connection_error_without_an_answer(
    llm: ScriptedLlmServer, client: openai.OpenAI, http: httpx.Client
) -> None:
    llm.set_rules([{"reply": {"content": "back"}, "fault": {"drop_connection": True, "times": 2}}])
    with pytest.raises(openai.APIConnectionError) as caught:
        ask(client, "hi")
    # The peer hung up before any status line: no 500, no body.
    assert "without sending a response" in str(caught.value.__cause__)
    with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
        http.post("/v1/chat/completions", json={"messages": [{"role": USER, "content": "hi"}]})
    assert ask(client, "hi").choices[0].message.content == "back"
    assert len(llm.requests("/v1/chat/completions")) == 3


def test_times_limits_the_fault_so_retries_succeed(llm: ScriptedLlmServer) -> None:
    llm.set_rules(
        [
            {
                "reply": {"content": "finally"},
                "fault": {"status": 503, "times": 2, "retry_after_ms": 1},
            }
        ]
    )
    with openai.OpenAI(base_url=llm.openai_base_url, api_key="t", max_retries=2) as retrying:
        assert ask(retrying, "hi").choices[0].message.content == "finally"
    assert len(llm.requests("/v1/chat/completions")) == 3

    llm.set_rules([{"fault": {"truncate": 0, "times": 1}, "reply": {"content": "full"}}])
    with openai.OpenAI(base_url=llm.openai_base_url, api_key="t", max_retries=0) as once:
        assert ask(once, "hi").choices[0].finish_reason == "length"
        assert ask(once, "hi").choices[0].message.content == "full"


def test_embeddings_are_deterministic_unit_vectors(
    http: httpx.Client, client: openai.OpenAI
) -> None:
    first = client.embeddings.create(model="e", input=["alpha", "beta"])
    again = client.embeddings.create(model="e", input="alpha")
    alpha, beta = (np.array(d.embedding) for d in first.data)
    assert alpha.shape == (DEFAULT_EMBEDDING_DIM,)
    assert np.allclose(alpha, again.data[0].embedding)
    assert not np.allclose(alpha, beta)
    assert np.isclose(np.linalg.norm(alpha), 1.0, atol=1e-5)

    # The client asks for base64 by default; plain floats must carry the same vector.
    body = {"model": "e", "input": "alpha", "encoding_format": "float"}
    raw = http.post("/v1/embeddings", json=body).json()
    assert np.allclose(alpha, raw["data"][0]["embedding"], atol=1e-6)


def test_embedding_dimension_from_request_or_script(
    llm: ScriptedLlmServer, client: openai.OpenAI
) -> None:
    asked = client.embeddings.create(model="e", input="x", dimensions=64)
    assert len(asked.data[0].embedding) == 64
    llm.set_script({"embedding_dim": 16})
    assert len(client.embeddings.create(model="e", input="x").data[0].embedding) == 16


def test_embeddings_rule_fault(llm: ScriptedLlmServer, client: openai.OpenAI) -> None:
    llm.set_rules([{"match": {"endpoint": "embeddings"}, "fault": {"status": 503, "times": 1}}])
    with pytest.raises(openai.InternalServerError):
        client.embeddings.create(model="e", input="x")
    assert len(client.embeddings.create(model="e", input="x").data) == 1
    assert ask(client, "chat is untouched").choices[0].message.content == "OK"


def test_models_and_health(http: httpx.Client, client: openai.OpenAI) -> None:
    assert [m.id for m in client.models.list()] == ["scripted-llm"]
    assert http.get("/_health").json() == {"status": "ok"}


def test_requests_are_recorded_and_cleared(
    llm: ScriptedLlmServer, http: httpx.Client, client: openai.OpenAI
) -> None:
    ask(client, "remember me", system="sys", temperature=0.3)
    [recorded] = llm.requests()
    assert (recorded.method, recorded.path) == ("POST", "/v1/chat/completions")
    assert isinstance(recorded.body, dict)
    assert recorded.body["temperature"] == 0.3
    messages = recorded.body["messages"]
    assert isinstance(messages, list)
    assert messages[-1] == {"role": USER, "content": "remember me"}

    over_http = http.get("/_requests").json()
    assert over_http == [recorded.model_dump(mode="json")]
    assert http.delete("/_requests").status_code == 204
    assert llm.requests() == []


def test_script_is_replaced_over_http(http: httpx.Client, client: openai.OpenAI) -> None:
    script = {"rules": [{"match": {"user": {"contains": "ping"}}, "reply": {"content": "pong"}}]}
    assert http.put("/_script", json=script).status_code == 200
    assert ask(client, "ping").choices[0].message.content == "pong"
    assert http.get("/_script").json()["rules"][0]["reply"]["content"] == "pong"

    refused = http.put("/_script", json={"rules": [{"replly": {}}]})
    assert refused.status_code == 422
    assert ask(client, "ping").choices[0].message.content == "pong"


@pytest.mark.parametrize(
    "rule",
    [
        {"match": {"user": {}}},
        {"match": {"user": {"regex": "("}}},
        {"fault": {"status": 200}},
        {"reply": {"content": "x"}, "unknown": 1},
    ],
)
def test_invalid_rules_are_refused(rule: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Rule.model_validate(rule)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_standalone_process_loads_rules_file(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    script = Script.model_validate({"rules": [{"reply": {"content": "from file"}}]})
    rules.write_text(script.model_dump_json())
    port = _free_port()
    command = [sys.executable, "-m", "tests.fakes.scripted_llm", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--rules", str(rules)],
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + CLI_START_TIMEOUT_S
        while True:
            try:
                httpx.get(f"{base}/_health").raise_for_status()
                break
            except httpx.TransportError:
                assert process.poll() is None, "the standalone server exited"
                assert time.monotonic() < deadline, "the standalone server did not start"
                time.sleep(0.1)
        body = {"model": "m", "messages": [{"role": USER, "content": "hi"}]}
        answer = httpx.post(f"{base}/v1/chat/completions", json=body).json()
        assert answer["choices"][0]["message"]["content"] == "from file"
    finally:
        process.terminate()
        process.wait(timeout=CLI_START_TIMEOUT_S)
