"""Per-key rate limits over real HTTP and real Redis: a key over its limit gets 429 with
Retry-After in the error envelope (OpenAI's shape under /v1), on every API process sharing the
Redis; another key of the same tenant is unaffected."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import redis
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.support.auth_helpers import bearer, make_key
from tests.support.http_server import ThreadedServer

pytestmark = pytest.mark.integration

LIMIT = 3
WINDOW_S = 600


@pytest.fixture(scope="module")
def limited_urls(settings: Settings) -> Iterator[tuple[str, str]]:
    """Two API processes (threads here) with a small limit over the same Redis."""
    from api.app import create_app

    api = settings.api.model_copy(
        update={"rate_limit_requests": LIMIT, "rate_limit_window_s": WINDOW_S}
    )
    limited = settings.model_copy(update={"api": api})
    with (
        ThreadedServer(create_app(limited)) as first,
        ThreadedServer(create_app(limited)) as second,
    ):
        yield first, second


def _key(sessions: sessionmaker[Session], settings: Settings) -> tuple[str, dict[str, str]]:
    created = make_key(sessions, settings, "default", [Capability.READ], name="rate")
    return str(created.id), bearer(created.key)


def test_a_key_over_its_limit_gets_429_with_retry_after(
    limited_urls: tuple[str, str],
    settings: Settings,
    session_factory: sessionmaker[Session],
) -> None:
    first, second = limited_urls
    key_id, key_a = _key(session_factory, settings)
    _, key_b = _key(session_factory, settings)

    for _ in range(LIMIT):
        assert httpx.get(f"{first}/api/v1/knowledge-bases", headers=key_a).status_code == 200

    refused = httpx.get(f"{first}/api/v1/knowledge-bases", headers=key_a)
    assert refused.status_code == 429, refused.text
    assert 1 <= int(refused.headers["Retry-After"]) <= WINDOW_S
    error = refused.json()["error"]
    assert error["code"] == "rate_limited" and error["message"]
    assert error["details"]["limit"] == LIMIT

    # The count lives in Redis: the other API process refuses the key too, on every face.
    assert httpx.get(f"{second}/api/v1/knowledge-bases", headers=key_a).status_code == 429
    openai = httpx.get(f"{second}/v1/models", headers=key_a)
    assert openai.status_code == 429 and "Retry-After" in openai.headers
    assert openai.json()["error"]["code"] == "rate_limited"
    with redis.Redis.from_url(settings.redis.url) as client:
        assert 0 < client.ttl(f"graphrag:rate:{key_id}") <= WINDOW_S

    # Another key of the same tenant has its own count.
    for _ in range(LIMIT):
        assert httpx.get(f"{second}/api/v1/knowledge-bases", headers=key_b).status_code == 200


def test_unauthenticated_requests_are_401_not_counted(limited_urls: tuple[str, str]) -> None:
    first, _ = limited_urls
    for _ in range(LIMIT + 2):
        response = httpx.get(f"{first}/api/v1/knowledge-bases", headers=bearer("grk_bad_key"))
        assert response.status_code == 401
    assert httpx.get(f"{first}/health").status_code == 200
