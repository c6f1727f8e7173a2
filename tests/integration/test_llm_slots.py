"""The per-model LLM slots in Redis: a limit shared by every process, freed by leases."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import pytest
import redis

from graphrag.errors import ServiceUnavailableError
from graphrag.llm.concurrency import LeaseSemaphore
from graphrag.settings import Settings

pytestmark = pytest.mark.integration

LIMIT = 2
HOLD_S = 0.2
THREADS = 6


@pytest.fixture()
def client(settings: Settings) -> Iterator[redis.Redis[bytes]]:
    c = redis.Redis.from_url(settings.redis.url)
    yield c
    c.close()


def _semaphore(
    client: redis.Redis[bytes], lease_s: int = 60, wait_s: float = 30.0
) -> LeaseSemaphore:
    return LeaseSemaphore(client, f"test-slots:{uuid.uuid4()}", LIMIT, lease_s, wait_s)


def test_limit_is_shared(client: redis.Redis[bytes]) -> None:
    first = _semaphore(client)
    second = LeaseSemaphore(client, first.key, LIMIT, 60, 1.0)  # another process, same model
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
    semaphore = _semaphore(client, lease_s=1)
    assert semaphore.try_acquire("dead-1") and semaphore.try_acquire("dead-2")
    assert not semaphore.try_acquire("alive")
    time.sleep(1.2)  # the leases of the two holders that never released run out
    assert semaphore.try_acquire("alive")
    client.delete(semaphore.key)


def test_waiting_too_long_is_a_clear_error(client: redis.Redis[bytes]) -> None:
    semaphore = _semaphore(client, wait_s=0.3)
    assert semaphore.try_acquire("x") and semaphore.try_acquire("y")
    with pytest.raises(ServiceUnavailableError), semaphore.slot():
        pass
    client.delete(semaphore.key)
