"""The chat gate's admission per API key: refused at once past the cap with its Retry-After,
each key counted apart, a place given back once however often it is released."""

from __future__ import annotations

import uuid

import pytest

from api.chat_gate import ChatGate
from graphrag.auth.models import Capability, Principal
from graphrag.errors import ChatBusyError
from graphrag.settings import Settings

pytestmark = pytest.mark.unit

PER_KEY = 2
RETRY_AFTER_S = 9


def _gate(per_key: int = PER_KEY) -> ChatGate:
    chat = Settings().chat.model_copy(
        update={"max_concurrent_per_key": per_key, "busy_retry_after_s": RETRY_AFTER_S}
    )
    return ChatGate(chat)


def _caller() -> Principal:
    return Principal(
        tenant_id=uuid.uuid4(), key_id=uuid.uuid4(), capabilities=frozenset(Capability)
    )


def test_a_key_past_its_cap_is_refused_with_retry_after() -> None:
    gate, caller = _gate(), _caller()
    tickets = [gate.enter(caller) for _ in range(PER_KEY)]
    with pytest.raises(ChatBusyError) as refused:
        gate.enter(caller)
    assert refused.value.code == "chat_busy" and refused.value.http_status == 429
    assert refused.value.retry_after_s == RETRY_AFTER_S
    gate.enter(_caller()).release()  # another key is not held up
    tickets[0].release()
    tickets[0].release()  # a second release gives nothing back twice
    gate.enter(caller)
    with pytest.raises(ChatBusyError):
        gate.enter(caller)


def test_zero_means_no_cap() -> None:
    gate, caller = _gate(per_key=0), _caller()
    assert len([gate.enter(caller) for _ in range(50)]) == 50
