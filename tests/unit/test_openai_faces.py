"""The OpenAI-compatible face's own logic: reading a conversation, usage, error shapes."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from api.errors import openai_error_response
from graphrag.chat.schemas import ChatRequest
from graphrag.chat.turn import ChatTurn
from graphrag.errors import InvalidInputError
from graphrag.faces.openai_chat import conversation, usage_of
from graphrag.faces.openai_schemas import CompletionRequest, openai_error_type
from graphrag.llm.client import TokenUsage
from graphrag.llm.messages import ChatMessage
from graphrag.settings import FacesSettings, get_settings

pytestmark = pytest.mark.unit

MAX_CHARS = 1000
MAX_SYSTEM_CHARS = 100


@pytest.fixture(scope="module")
def faces() -> FacesSettings:
    """The face's caps, small."""
    return get_settings().faces.model_copy(
        update={"max_conversation_chars": MAX_CHARS, "max_system_chars": MAX_SYSTEM_CHARS}
    )


def _request(*messages: dict[str, Any], **extra: Any) -> CompletionRequest:
    return CompletionRequest.model_validate({"model": "kb/x", "messages": messages, **extra})


def test_last_message_is_the_question_and_the_rest_the_history(faces: FacesSettings) -> None:
    question, history, instructions = conversation(
        _request(
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Where?"},
            {"role": "assistant", "content": "In Oslo."},
            {"role": "tool", "content": "ignored"},
            {"role": "developer", "content": [{"type": "text", "text": "Cite."}]},
            {"role": "user", "content": [{"type": "text", "text": "And when?"}]},
        ),
        faces,
    )
    assert question == "And when?"
    assert history == [
        ChatMessage(role="user", content="Where?"),
        ChatMessage(role="assistant", content="In Oslo."),
    ]
    assert instructions == "Be brief.\nCite."


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "A."}],
        [{"role": "system", "content": "Only instructions."}],
        [{"role": "user", "content": "   "}],
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
        [{"role": "user", "content": "x" * (MAX_CHARS + 1)}],
        [
            {"role": "system", "content": "s" * (MAX_SYSTEM_CHARS // 2)},
            {"role": "developer", "content": "d" * (MAX_SYSTEM_CHARS // 2)},
            {"role": "user", "content": "Q?"},
        ],
    ],
    ids=[
        "ends-with-assistant",
        "no-question",
        "blank-question",
        "image",
        "too-long",
        "system-too-long",
    ],
)
def test_unanswerable_conversations_are_refused(
    messages: list[dict[str, Any]], faces: FacesSettings
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        conversation(_request(*messages), faces)
    assert refused.value.details["param"] == "messages"


def test_system_text_up_to_the_cap_is_kept(faces: FacesSettings) -> None:
    at_cap = "s" * MAX_SYSTEM_CHARS
    _, _, instructions = conversation(
        _request({"role": "system", "content": at_cap}, {"role": "user", "content": "Q?"}), faces
    )
    assert instructions == at_cap


def test_unknown_openai_parameters_are_ignored_but_n_must_be_one() -> None:
    request = _request({"role": "user", "content": "Q?"}, temperature=0.2, top_p=0.5)
    assert request.include_usage is False
    with pytest.raises(ValueError):
        _request({"role": "user", "content": "Q?"}, n=2)


def _turn(answer: str, messages: list[ChatMessage]) -> ChatTurn:
    request = ChatRequest(query="Q?", kb_ids=[uuid.uuid4()])
    turn = ChatTurn(tenant_id=uuid.uuid4(), session_id=None, owner="", request=request, scopes=[])
    turn.answer, turn.messages = answer, messages
    return turn


def test_usage_is_the_servers_count_when_it_gave_one() -> None:
    turn = _turn("twelve chars", [ChatMessage(role="user", content="x" * 40)])
    assert usage_of(turn, 4.0) == {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
    turn.usage.add(TokenUsage(7, 2))
    turn.usage.add(TokenUsage())  # a call the server reported nothing for adds nothing
    turn.usage.add(TokenUsage(5, 1))
    assert usage_of(turn, 4.0) == {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "invalid_request_error"),
        (429, "rate_limit_error"),
        (503, "server_error"),
    ],
)
def test_error_types_follow_openai(status: int, kind: str) -> None:
    assert openai_error_type(status) == kind


def test_invalid_input_is_a_400_naming_the_field() -> None:
    details = {"errors": [{"loc": ["body", "messages", 0, "role"], "msg": "bad", "type": "x"}]}
    response = openai_error_response(422, "invalid_input", "the request is not valid", details)
    assert response.status_code == 400
    body = json.loads(bytes(response.body))
    assert body == {
        "error": {
            "message": "the request is not valid",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "invalid_input",
        }
    }
