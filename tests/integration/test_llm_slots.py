"""The per-model LLM slots in Redis: a limit shared by every process, freed by leases that
their holder renews while it holds them."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
import redis

from graphrag.errors import ServiceUnavailableError
from graphrag.llm.concurrency import LeasePolicy, LeaseSemaphore
from graphrag.settings import Settings

pytestmark = pytest.mark.integration

LIMIT = 2
HOLD_S = 0.2
THREADS = 6
LONG = LeasePolicy(lease_s=60, renew_s=1.0, stale_after_s=5.0, max_hold_s=600)
# Short enough that a test holds a slot for several leases in a second or two.
SHORT = LeasePolicy(lease_s=0.6, renew_s=0.1, stale_after_s=0.3, max_hold_s=60)


@pytest.fixture()
def client(settings: Settings) -> Iterator[redis.Redis[bytes]]:
    c = redis.Redis.from_url(settings.redis.url)
    yield c
    c.close()


def _semaphore(
    client: redis.Redis[bytes], policy: LeasePolicy = LONG, wait_s: float = 30.0, limit: int = LIMIT
) -> LeaseSemaphore:
    return LeaseSemaphore(client, f"test-slots:{uuid.uuid4()}", limit, policy, wait_s)


def test_limit_is_shared(client: redis.Redis[bytes]) -> None:
    first = _semaphore(client)
    second = LeaseSemaphore(client, first.key, LIMIT, LONG, 1.0)  # another process, same model
    assert first.try_acquire("a") and second.try_acquire("b")
    assert not first.try_acquire("c") and not second.try_acquire("c")
    first.release("a")
    assert second.try_acquire("c")
    assert first.holders() == LIMIT
    client.delete(first.key)


def test_concurrent_holders_never_exceed_the_limit(client: redis.Redis[bytes]) -> None:
    semaphore = _semaphore(client)
    lock, current, peak = threading.Lock(), [0], [0]

    def work() -> None:
        with semaphore.slot():
            with lock:
                current[0] += 1
                peak[0] = max(peak[0], current[0])
            time.sleep(HOLD_S)
            with lock:
                current[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == LIMIT
    assert semaphore.holders() == 0


def test_a_dead_holder_frees_its_slot_when_the_lease_ends(client: redis.Redis[bytes]) -> None:
    semaphore = _semaphore(client, SHORT)
    assert semaphore.try_acquire("dead-1") and semaphore.try_acquire("dead-2")
    assert not semaphore.try_acquire("alive")
    time.sleep(SHORT.lease_s + 0.2)  # the leases of the two holders that never renewed run out
    assert semaphore.try_acquire("alive")
    client.delete(semaphore.key)


def test_waiting_too_long_is_a_clear_error(client: redis.Redis[bytes]) -> None:
    semaphore = _semaphore(client, wait_s=0.3)
    assert semaphore.try_acquire("x") and semaphore.try_acquire("y")
    with pytest.raises(ServiceUnavailableError), semaphore.slot():
        pass
    client.delete(semaphore.key)


def test_a_held_slot_is_renewed_past_its_lease(client: redis.Redis[bytes]) -> None:
    semaphore = _semaphore(client, SHORT, limit=1)
    other = LeaseSemaphore(client, semaphore.key, 1, SHORT, 1.0)  # another process
    with semaphore.slot():
        time.sleep(3 * SHORT.lease_s)  # three leases long: only renewals keep it
        assert not other.try_acquire("late")
        leases = semaphore.leases()
        assert (leases.leases, leases.in_flight, leases.stale) == (1, 1, 0)
    assert other.try_acquire("late")  # given back at the end of the block
    client.delete(semaphore.key)


def test_a_slot_held_past_its_max_hold_frees_itself(client: redis.Redis[bytes]) -> None:
    """A holder that never gives its slot back (a leaked stream) is renewed only so long."""
    policy = LeasePolicy(lease_s=0.5, renew_s=0.1, stale_after_s=0.3, max_hold_s=1.0)
    semaphore = _semaphore(client, policy, limit=1)
    other = LeaseSemaphore(client, semaphore.key, 1, policy, wait_s=10.0)
    with semaphore.slot():
        assert not other.try_acquire("early")
        with other.slot():  # waits until max_hold_s + lease_s have passed
            assert other.leases().in_flight == 1
    client.delete(semaphore.key)


def test_a_lease_not_renewed_is_reported_stale(client: redis.Redis[bytes]) -> None:
    semaphore = _semaphore(client, SHORT)
    with semaphore.slot():
        # A lease last renewed before stale_after_s: its holder no longer runs a call.
        renewed_at = time.time() - SHORT.stale_after_s - 0.1
        client.zadd(semaphore.key, {"gone-host:4242:abc": renewed_at + SHORT.lease_s})
        leases = semaphore.leases()
        assert (leases.leases, leases.in_flight, leases.stale) == (2, 1, 1)
        assert leases.stale_holders == ["gone-host:4242"]
        time.sleep(2 * SHORT.renew_s)
        held = client.zrange(semaphore.key, 0, -1)
        mine = [t.decode() for t in held if t != b"gone-host:4242:abc"]
        assert [t.rsplit(":", 1)[0] for t in mine] == [f"{socket.gethostname()}:{os.getpid()}"]
    client.delete(semaphore.key)
