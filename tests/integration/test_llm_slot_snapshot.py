"""LLM slot leases when Redis comes back from a snapshot: leases saved while their calls ran come
back with nobody to renew them; `/api/v1/system` reports them stale (held with no call in
flight) and the next LLM call takes their slots within a lease, not after the old 30 minutes.

Each test runs its own redis-server (own port and directory), so restarting it from a snapshot
never touches the Redis the other tests share.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from graphrag.auth.models import Capability
from graphrag.llm.client import LlmClient
from graphrag.llm.concurrency import LeaseSemaphore, background_limiter
from graphrag.llm.messages import ChatMessage
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.auth_helpers import bearer, make_key
from tests.support.http_server import ThreadedServer
from tests.support.isolated_worker import own_database
from tests.support.own_redis import OwnRedis

pytestmark = pytest.mark.integration

log = logging.getLogger(__name__)

SLOTS = 2
LEASE_S = 3.0
RENEW_S = 0.2
STALE_AFTER_S = 0.6
# The wait for a slot: above one lease, far below the 1,800 s lease of old.
WAIT_S = LEASE_S + 20.0
HTTP_TIMEOUT_S = 30.0
SETTLE_S = 30.0  # bound on waits for what must happen within a lease; only a fault reaches it


@dataclass
class _Stack:
    broker: OwnRedis
    settings: Settings
    http: httpx.Client

    def limiter(self) -> LeaseSemaphore:
        """The background slots as a worker process takes them."""
        return background_limiter(redis.Redis.from_url(self.broker.url), self.settings.llm, SLOTS)

    def background_leases(self) -> dict[str, Any]:
        body = self.http.get("/api/v1/system").json()
        leases: dict[str, Any] = body["llm"]["slot_leases"]["background"]
        return leases


def _own_settings(settings: Settings, redis_url: str, llm_url: str) -> Settings:
    llm = settings.llm.model_copy(
        update={
            "base_url": llm_url,
            "model": "scripted",
            "concurrency_limit": SLOTS,
            "concurrency_wait_s": WAIT_S,
            "slot_lease_s": LEASE_S,
            "slot_renew_s": RENEW_S,
            "slot_stale_after_s": STALE_AFTER_S,
        }
    )
    redis_settings = settings.redis.model_copy(update={"url": redis_url})
    return settings.model_copy(update={"redis": redis_settings, "llm": llm})


@pytest.fixture()
def stack(
    tmp_path: Path,
    settings: Settings,
    settings_env: dict[str, str],
    services_env: dict[str, str],
    fresh_scripted_llm: ScriptedLlmServer,
) -> Iterator[_Stack]:
    from api.app import create_app

    broker = OwnRedis(tmp_path / "redis")
    broker.start()
    moved = _own_settings(settings, broker.url, fresh_scripted_llm.openai_base_url)
    env = {**settings_env, "REDIS_URL": broker.url}
    try:
        with own_database(services_env["DATABASE_URL"], moved, env) as (own, _, sessions):
            key = make_key(sessions, own, own.api.default_tenant, [Capability.READ]).key
            with (
                ThreadedServer(create_app(own)) as url,
                httpx.Client(base_url=url, headers=bearer(key), timeout=HTTP_TIMEOUT_S) as http,
            ):
                yield _Stack(broker, own, http)
    finally:
        broker.stop()


def _ask(llm: LlmClient) -> str:
    return llm.complete([ChatMessage(role="user", content="slot check")]).content


def test_leases_restored_from_a_snapshot_are_reported_then_reclaimed(
    stack: _Stack, fresh_scripted_llm: ScriptedLlmServer
) -> None:
    fresh_scripted_llm.set_script({"models": ["scripted"], "default": {"content": "fine"}})
    limiter = stack.limiter()
    with limiter.slot(), limiter.slot():  # every slot taken by calls in flight
        time.sleep(2 * RENEW_S)  # renewed at least once
        assert stack.background_leases()["in_flight"] == SLOTS
        stack.broker.save()  # the snapshot holds both leases
    assert stack.background_leases()["leases"] == 0  # both calls ended and gave their slots back

    stack.broker.lose()
    stack.broker.start()  # from the snapshot: both leases are back, their calls long over
    restored = time.monotonic()
    holder = f"{socket.gethostname()}:{os.getpid()}"
    leases = stack.background_leases()
    assert leases["leases"] == SLOTS and leases["limit"] == SLOTS
    # Nobody renews them: past stale_after_s they show as held with no call in flight.
    deadline = time.monotonic() + SETTLE_S
    while leases["in_flight"]:
        assert time.monotonic() < deadline, leases
        time.sleep(RENEW_S)
        leases = stack.background_leases()
    assert (leases["stale"], leases["stale_holders"]) == (SLOTS, [holder] * SLOTS)

    # An LLM call waits at most until the restored leases end, then takes a slot.
    answer = _ask(LlmClient(stack.settings.llm, stack.limiter()))
    assert answer == "fine"
    log.warning(
        "slot leases from a snapshot: call answered %.1f s after Redis restarted (lease %.0f s)",
        time.monotonic() - restored,
        LEASE_S,
    )
    assert len(fresh_scripted_llm.requests("/v1/chat/completions")) == 1
    after = stack.background_leases()
    assert (after["leases"], after["stale"]) == (0, 0)  # the stale leases were dropped


def test_calls_in_flight_count_again_after_redis_restarts_empty(stack: _Stack) -> None:
    """Redis restarted without its data: the renewals put the leases of running calls back, so
    the slot limit still counts them."""
    limiter = stack.limiter()
    other = stack.limiter()  # another process's view
    with limiter.slot():
        stack.broker.lose()
        stack.broker.start()  # empty: no snapshot was ever written
        leases = stack.background_leases()
        deadline = time.monotonic() + SETTLE_S
        while leases["in_flight"] < 1:
            assert time.monotonic() < deadline, leases
            time.sleep(RENEW_S)
            leases = stack.background_leases()
        assert (leases["leases"], leases["stale"]) == (1, 0)
        assert other.try_acquire("second")
        assert not other.try_acquire("third")  # the running call and "second": the limit of 2
    assert stack.background_leases()["leases"] == 1  # only "second" now


def test_a_call_that_ends_while_redis_is_away_keeps_its_result(stack: _Stack) -> None:
    """Giving the slot back fails with Redis down; the call's answer is not lost to that (the
    lease, no longer renewed, would end by itself)."""
    limiter = stack.limiter()
    with limiter.slot():  # leaving the block must not raise (Redis is gone)
        stack.broker.lose()
    stack.broker.start()
    assert limiter.try_acquire("next") and limiter.try_acquire("after")
