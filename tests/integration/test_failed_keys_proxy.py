"""Bad keys behind a reverse proxy, over real HTTP and real Redis, with the API run under the
options `graphrag serve` uses (`api.serving.server_options`): clients that a trusted proxy
names apart in X-Forwarded-For are counted apart, so one client's bad keys lock out nobody
else; the header is not believed from any other peer; and IPv6 clients are counted by their
/64, so rotating addresses inside it gains nothing.

Each test's proxy and peers are loopback addresses of their own (127.x.y.z), and its client
addresses are drawn at random, so the session's other callers are never counted.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import httpx
import pytest
import redis
from sqlalchemy.orm import Session, sessionmaker

from api.serving import server_options
from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.support.auth_helpers import bearer, make_key
from tests.support.http_server import ThreadedServer

pytestmark = pytest.mark.integration

FAILURES = 3
WINDOW_S = 600
KBS = "/api/v1/knowledge-bases"
BAD_KEY = bearer("grk_00000000_" + "x" * 43)
PROXY = f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.1"
STRANGER = f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.2"


@pytest.fixture(scope="module")
def proxied_url(settings: Settings) -> Iterator[str]:
    from api.app import create_app

    auth = settings.auth.model_copy(
        update={"failed_max_per_window": FAILURES, "failed_window_s": WINDOW_S}
    )
    api = settings.api.model_copy(update={"forwarded_allow_ips": [PROXY]})
    served = settings.model_copy(update={"auth": auth, "api": api})
    with ThreadedServer(create_app(served), **server_options(served)) as url:
        yield url


@pytest.fixture(scope="module")
def good_key(session_factory: sessionmaker[Session], settings: Settings) -> dict[str, str]:
    return bearer(make_key(session_factory, settings, "default", [Capability.READ]).key)


def _from(url: str, peer: str) -> httpx.Client:
    """A client whose connections come from the loopback address `peer`."""
    return httpx.Client(
        base_url=url, transport=httpx.HTTPTransport(local_address=peer), timeout=30.0
    )


def _as(client_address: str, key: dict[str, str]) -> dict[str, str]:
    return {**key, "X-Forwarded-For": client_address}


def _ipv4() -> str:
    return f"198.51.{random.randint(0, 255)}.{random.randint(1, 254)}"


def _ipv6_net() -> str:
    """A random /64 of the documentation range, as its first four groups."""
    return f"2001:db8:{random.randint(1, 0xFFFF):x}:{random.randint(1, 0xFFF0):x}"


def _failed_count(settings: Settings, bucket: str) -> int:
    with redis.Redis.from_url(settings.redis.url) as client:
        return int(client.get(f"graphrag:auth-failed:{bucket}") or 0)


def test_clients_behind_a_trusted_proxy_are_counted_apart(
    proxied_url: str, settings: Settings, good_key: dict[str, str]
) -> None:
    guesser, neighbour = _ipv4(), _ipv4()
    with _from(proxied_url, PROXY) as proxy:
        for _ in range(FAILURES):
            assert proxy.get(KBS, headers=_as(guesser, BAD_KEY)).status_code == 401
        locked = proxy.get(KBS, headers=_as(guesser, good_key))
        assert locked.status_code == 429 and locked.json()["error"]["code"] == "rate_limited"

        # Another client of the same proxy is not locked out, bad key or good.
        assert proxy.get(KBS, headers=_as(neighbour, good_key)).status_code == 200
        assert proxy.get(KBS, headers=_as(neighbour, BAD_KEY)).status_code == 401
        assert proxy.get(KBS, headers=_as(neighbour, good_key)).status_code == 200
    assert _failed_count(settings, guesser) == FAILURES
    assert _failed_count(settings, neighbour) == 1
    assert _failed_count(settings, PROXY) == 0


def test_a_peer_that_is_not_a_trusted_proxy_cannot_pick_its_address(
    proxied_url: str, settings: Settings, good_key: dict[str, str]
) -> None:
    with _from(proxied_url, STRANGER) as stranger:
        for _ in range(FAILURES):  # a new forwarded address each time: not believed
            assert stranger.get(KBS, headers=_as(_ipv4(), BAD_KEY)).status_code == 401
        refused = stranger.get(KBS, headers=_as(_ipv4(), good_key))
        assert refused.status_code == 429, refused.text
    assert _failed_count(settings, STRANGER) == FAILURES


def test_ipv6_clients_of_one_64_share_their_count(
    proxied_url: str, settings: Settings, good_key: dict[str, str]
) -> None:
    network, other = _ipv6_net(), _ipv6_net()
    rotating = [f"{network}:{random.randint(1, 0xFFFF):x}::{n + 1:x}" for n in range(FAILURES)]
    with _from(proxied_url, PROXY) as proxy:
        for address in rotating:  # one bad key from each of several addresses of the /64
            assert proxy.get(KBS, headers=_as(address, BAD_KEY)).status_code == 401
        fresh = f"{network}:ffff:ffff:ffff:ffff"  # never used, in the same /64
        assert proxy.get(KBS, headers=_as(fresh, good_key)).status_code == 429
        assert proxy.get(KBS, headers=_as(f"{other}::1", good_key)).status_code == 200
    assert _failed_count(settings, f"{network}::/64") == FAILURES
