"""The OpenAI-compatible face driven by the official `openai` client over real HTTP: bases as
models, streamed and whole completions with references and usage, OpenAI-shaped errors,
capabilities and tenant isolation. Documents go through the real worker; the answer comes
from the scripted LLM."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb, wait_terminal
from tests.support.auth_helpers import bearer, make_key
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

QUESTION = "Who runs the Varnholt observatory?"
ANSWER = "The Varnholt observatory is run by Ines Okafor [1]."
HANDBOOK = "The Varnholt observatory is run by Ines Okafor, an astronomer from Lagos."
POLICIES = "Visitors of the Varnholt observatory must book a night slot in advance."
INSTRUCTIONS = "Answer like a ship's captain."
EARLIER_QUESTION = "Where is the Varnholt observatory?"


@dataclass
class Tenants:
    """Tenant A (two bases, a read-write and a read-only key) and tenant B (one base)."""

    a_key: str
    a_read_key: str
    b_key: str
    handbook: dict[str, Any]
    policies: dict[str, Any]
    b_kb: dict[str, Any]


def _add_text(client: httpx.Client, kb_id: str, title: str, text: str) -> None:
    added = client.post(
        f"/api/v1/knowledge-bases/{kb_id}/knowledge/text", json={"title": title, "content": text}
    )
    assert added.status_code == 202, added.text
    assert wait_terminal(client, added.json()["id"])["parse_status"] == "completed"


@pytest.fixture(scope="module")
def tenants(
    api_url: str,
    settings: Settings,
    session_factory: sessionmaker[Session],
    worker: WorkerProcess,
) -> Iterator[Tenants]:
    a_tenant, b_tenant = (f"oa-{side}-{uuid.uuid4().hex[:8]}" for side in "ab")
    a_key = make_key(session_factory, settings, a_tenant, [Capability.READ, Capability.WRITE])
    a_read = make_key(session_factory, settings, a_tenant, [Capability.READ])
    b_key = make_key(session_factory, settings, b_tenant, list(Capability))
    with (
        httpx.Client(base_url=api_url, timeout=60.0, headers=bearer(a_key.key)) as a,
        httpx.Client(base_url=api_url, timeout=60.0, headers=bearer(b_key.key)) as b,
    ):
        handbook, policies, b_kb = create_kb(a), create_kb(a), create_kb(b)
        _add_text(a, handbook["id"], "handbook", HANDBOOK)
        _add_text(a, policies["id"], "policies", POLICIES)
        _add_text(b, b_kb["id"], "secret", HANDBOOK)
        yield Tenants(a_key.key, a_read.key, b_key.key, handbook, policies, b_kb)


Clients = Callable[[str], openai.OpenAI]


@pytest.fixture(scope="module")
def clients(api_url: str) -> Iterator[Clients]:
    """Official OpenAI clients pointed at our `/v1`, one per key, closed at the end."""
    made: dict[str, openai.OpenAI] = {}

    def client(key: str) -> openai.OpenAI:
        if key not in made:
            made[key] = openai.OpenAI(
                base_url=f"{api_url}/v1", api_key=key, max_retries=0, timeout=60.0
            )
        return made[key]

    yield client
    for opened in made.values():
        opened.close()


def _answer_rule(scripted: ScriptedLlmServer, text: str = ANSWER) -> None:
    rule = {
        "name": "answer",
        "match": {"user": {"contains": "Passages:"}},
        "reply": {"content": text},
    }
    scripted.set_rules([rule])


def _answer_requests(scripted: ScriptedLlmServer) -> list[dict[str, Any]]:
    bodies = [r.body for r in scripted.requests("/v1/chat/completions")]
    return [b for b in bodies if isinstance(b, dict) and "Passages:" in json.dumps(b)]


def test_models_are_the_callers_bases(clients: Clients, tenants: Tenants) -> None:
    ids = {m.id for m in clients(tenants.a_read_key).models.list()}
    for kb in (tenants.handbook, tenants.policies):
        assert {f"kb/{kb['name']}", kb["id"]} <= ids
    b_ids = {m.id for m in clients(tenants.b_key).models.list()}
    assert b_ids == {f"kb/{tenants.b_kb['name']}", tenants.b_kb["id"]}
    assert not ids & b_ids


def test_completion_answers_with_references_and_usage(
    clients: Clients, tenants: Tenants, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    _answer_rule(fresh_scripted_llm)
    completion = clients(tenants.a_key).chat.completions.create(
        model=f"kb/{tenants.handbook['name']}",
        messages=[
            {"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": EARLIER_QUESTION},
            {"role": "assistant", "content": "In the hills."},
            {"role": "user", "content": QUESTION},
        ],
    )
    assert completion.object == "chat.completion"
    assert completion.choices[0].message.content == ANSWER
    assert completion.choices[0].finish_reason == "stop"
    references = (completion.model_extra or {})["references"]
    assert references[0]["n"] == 1 and references[0]["kb_id"] == tenants.handbook["id"]
    assert "Ines Okafor" in references[0]["excerpt"]
    usage = completion.usage
    assert usage is not None
    # The scripted server counts whitespace words: these are its counts, passed through.
    assert usage.completion_tokens == len(ANSWER.split())
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens > len(ANSWER.split())
    # The system text may lead the first user turn (models without a system role).
    sent = "\n".join(m["content"] for m in _answer_requests(fresh_scripted_llm)[-1]["messages"])
    order = [INSTRUCTIONS, EARLIER_QUESTION, "In the hills.", "Passages:", QUESTION]
    positions = [sent.find(text) for text in order]
    assert -1 not in positions and positions == sorted(positions), positions


def test_streamed_completion_chunks_and_done(
    clients: Clients, tenants: Tenants, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    _answer_rule(fresh_scripted_llm)
    stream = clients(tenants.a_key).chat.completions.create(
        model=tenants.handbook["id"],
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert {c.object for c in chunks} == {"chat.completion.chunk"}
    assert len({c.id for c in chunks}) == 1
    first = chunks[0]
    assert first.choices[0].delta.role == "assistant"
    assert (first.model_extra or {})["references"][0]["kb_id"] == tenants.handbook["id"]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == ANSWER
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == len(ANSWER.split())


def test_stream_ends_with_done_line(
    api_url: str, tenants: Tenants, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    _answer_rule(fresh_scripted_llm)
    body = {
        "model": f"kb/{tenants.handbook['name']}",
        "messages": [{"role": "user", "content": QUESTION}],
        "stream": True,
    }
    with (
        httpx.Client(base_url=api_url, headers=bearer(tenants.a_key), timeout=60.0) as http,
        http.stream("POST", "/v1/chat/completions", json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    assert all(line.startswith("data: ") for line in lines)
    # Without include_usage no usage chunk is sent, as OpenAI does.
    last = json.loads(lines[-2].removeprefix("data: "))
    assert last["choices"][0]["finish_reason"] == "stop" and "usage" not in last


def test_several_bases_in_one_model(
    clients: Clients, tenants: Tenants, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    _answer_rule(fresh_scripted_llm)
    model = f"kb/{tenants.handbook['name']}+kb/{tenants.policies['name']}"
    completion = clients(tenants.a_key).chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Varnholt observatory"}]
    )
    references = (completion.model_extra or {})["references"]
    assert {r["kb_id"] for r in references} == {tenants.handbook["id"], tenants.policies["id"]}
    assert completion.model == model


def test_key_without_write_gets_openai_403(
    clients: Clients, tenants: Tenants, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    with pytest.raises(openai.PermissionDeniedError) as caught:
        clients(tenants.a_read_key).chat.completions.create(
            model=f"kb/{tenants.handbook['name']}",
            messages=[{"role": "user", "content": QUESTION}],
        )
    assert caught.value.status_code == 403
    error = caught.value.response.json()["error"]
    assert error["type"] == "permission_error" and error["code"] == "forbidden"
    assert set(error) == {"message", "type", "param", "code"} and "write" in error["message"]
    assert _answer_requests(fresh_scripted_llm) == []


def test_other_tenants_base_is_not_answerable(
    clients: Clients, tenants: Tenants, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    _answer_rule(fresh_scripted_llm)
    b_client = clients(tenants.b_key)
    a_kb = tenants.handbook
    for model in (f"kb/{a_kb['name']}", a_kb["id"], f"kb/{tenants.b_kb['name']}+{a_kb['id']}"):
        with pytest.raises(openai.NotFoundError) as caught:
            b_client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": QUESTION}]
            )
        error = caught.value.response.json()["error"]
        assert error["code"] == "model_not_found" and error["param"] == "model"
        assert error["type"] == "invalid_request_error"
    assert _answer_requests(fresh_scripted_llm) == []


def test_bad_requests_get_openai_errors(clients: Clients, tenants: Tenants) -> None:
    model = f"kb/{tenants.handbook['name']}"
    with pytest.raises(openai.AuthenticationError) as unauthorized:
        clients("grk_0000_not-a-key").models.list()
    assert unauthorized.value.response.json()["error"]["type"] == "authentication_error"
    client = clients(tenants.a_key)
    with pytest.raises(openai.BadRequestError) as empty:
        client.chat.completions.create(model=model, messages=[])
    assert empty.value.response.json()["error"]["param"] == "messages"
    with pytest.raises(openai.BadRequestError) as not_a_question:
        client.chat.completions.create(
            model=model,
            messages=[
                {"role": "user", "content": QUESTION},
                {"role": "assistant", "content": "Hm."},
            ],
        )
    error = not_a_question.value.response.json()["error"]
    assert error["code"] == "invalid_input" and error["param"] == "messages"


def test_llm_failure_is_an_openai_error(
    clients: Clients, tenants: Tenants, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    rule = {"match": {"user": {"contains": "Passages:"}}, "fault": {"status": 500}}
    fresh_scripted_llm.set_rules([rule])
    client = clients(tenants.a_key)
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    model = f"kb/{tenants.handbook['name']}"
    with pytest.raises(openai.InternalServerError) as whole:
        client.chat.completions.create(model=model, messages=messages)
    assert whole.value.status_code == 503
    assert whole.value.response.json()["error"]["code"] == "llm_unavailable"
    with pytest.raises(openai.APIError) as streamed:
        list(client.chat.completions.create(model=model, messages=messages, stream=True))
    assert "LLM call failed" in streamed.value.message
