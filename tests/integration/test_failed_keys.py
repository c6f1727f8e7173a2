"""Bad keys limited per client address, over real HTTP and real Redis: past the allowed
failures, an address that sends a key is answered 429 before the key is looked at (a good key
from it waits too), while other addresses and key-free routes keep being answered; with Redis
down nothing is refused for it.

Each test calls from an address of its own in 127.0.0.0/8 (the server sees it as the client),
so the session's other callers on 127.0.0.1 are never counted.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import httpx
import pytest
import redis
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.support.auth_helpers import bearer, make_key
from tests.support.http_server import ThreadedServer, free_port

pytestmark = pytest.mark.integration

FAILURES = 3
WINDOW_S = 600
KBS = "/api/v1/knowledge-bases"
BAD_KEY = bearer("grk_00000000_" + "x" * 43)


def _limited(settings: Settings, **more: object) -> Settings:
    auth = settings.auth.model_copy(
        update={"failed_max_per_window": FAILURES, "failed_window_s": WINDOW_S}
    )
    return settings.model_copy(update={"auth": auth, **more})


@pytest.fixture(scope="module")
def limited_url(settings: Settings) -> Iterator[str]:
    from api.app import create_app

    with ThreadedServer(create_app(_limited(settings))) as url:
        yield url


def _address() -> str:
    """A loopback address no other test calls from."""
    return f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.{random.randint(1, 254)}"


def _client(url: str, address: str) -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=url, transport=transport, timeout=30.0)


def _good_key(sessions: sessionmaker[Session], settings: Settings) -> dict[str, str]:
    return bearer(make_key(sessions, settings, "default", [Capability.READ], name="good").key)


def test_bad_keys_from_one_address_are_429_before_any_key_is_checked(
    limited_url: str, settings: Settings, session_factory: sessionmaker[Session]
) -> None:
    good = _good_key(session_factory, settings)
    address = _address()
    with _client(limited_url, address) as stranger:
        for _ in range(FAILURES):
            assert stranger.get(KBS, headers=BAD_KEY).status_code == 401
        refused = stranger.get(KBS, headers=BAD_KEY)
        assert refused.status_code == 429, refused.text
        error = refused.json()["error"]
        assert error["code"] == "rate_limited" and error["details"]["limit"] == FAILURES
        assert 1 <= int(refused.headers["Retry-After"]) <= WINDOW_S
        # Refused before the key is hashed or looked up: a good key from there waits too,
        # on every face; a body is not read either.
        assert stranger.get(KBS, headers=good).status_code == 429
        openai = stranger.get("/v1/models", headers=good)
        assert openai.status_code == 429 and openai.json()["error"]["code"] == "rate_limited"
        upload = stranger.post(KBS, headers=BAD_KEY, content=b"[{}," * 100_000)
        assert upload.status_code == 429
        # Without a key, nothing costly happens: still a plain 401; open routes answer.
        assert stranger.get(KBS).status_code == 401
        assert stranger.get("/health").status_code == 200
    # The API keeps answering everyone else, with the same good key.
    with _client(limited_url, _address()) as other:
        assert other.get(KBS, headers=good).status_code == 200
    with redis.Redis.from_url(settings.redis.url) as client:
        assert int(client.get(f"graphrag:auth-failed:{address}") or 0) == FAILURES
        assert 0 < client.ttl(f"graphrag:auth-failed:{address}") <= WINDOW_S


def test_good_keys_and_missing_keys_are_not_counted(
    limited_url: str, settings: Settings, session_factory: sessionmaker[Session]
) -> None:
    good = _good_key(session_factory, settings)
    with _client(limited_url, _address()) as caller:
        for _ in range(FAILURES + 2):
            assert caller.get(KBS, headers=good).status_code == 200
            assert caller.get(KBS).status_code == 401
        for _ in range(FAILURES):
            assert caller.get(KBS, headers=BAD_KEY).status_code == 401
        assert caller.get(KBS, headers=BAD_KEY).status_code == 429


def test_redis_down_refuses_nothing(
    settings: Settings, session_factory: sessionmaker[Session]
) -> None:
    from api.app import create_app

    # Nothing listens on that port: every Redis call fails at once.
    no_redis = settings.redis.model_copy(update={"url": f"redis://127.0.0.1:{free_port()}/0"})
    good = _good_key(session_factory, settings)
    with (
        ThreadedServer(create_app(_limited(settings, redis=no_redis))) as url,
        _client(url, _address()) as caller,
    ):
        for _ in range(FAILURES + 2):
            assert caller.get(KBS, headers=BAD_KEY).status_code == 401
        assert caller.get(KBS, headers=good).status_code == 200
