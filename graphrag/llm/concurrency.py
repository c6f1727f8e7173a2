"""A counting semaphore in Redis with leases: at most N background LLM calls per model, across
every worker process; a holder that dies frees its slot when its lease runs out."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from graphrag.errors import ServiceUnavailableError

__all__ = ["LeaseSemaphore"]

# Drop expired leases, then take a slot if one is free. Atomic, so two workers never both take
# the last slot.
_ACQUIRE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
  return 1
end
return 0
"""

_POLL_S = 0.05


class LeaseSemaphore:
    """`with semaphore.slot(): ...` holds one of `limit` slots named by `key`."""

    def __init__(
        self,
        client: redis.Redis[bytes],
        key: str,
        limit: int,
        lease_s: int,
        wait_s: float,
        poll_s: float = _POLL_S,
    ) -> None:
        self.client = client
        self.key = key
        self.limit = limit
        self.lease_s = lease_s
        self.wait_s = wait_s
        self.poll_s = poll_s
        self._acquire = client.register_script(_ACQUIRE)

    def try_acquire(self, token: str) -> bool:
        now = time.time()
        return bool(
            self._acquire(keys=[self.key], args=[now, now + self.lease_s, self.limit, token])
        )

    def release(self, token: str) -> None:
        self.client.zrem(self.key, token)

    def holders(self) -> int:
        """Slots held now (expired leases not counted)."""
        return int(self.client.zcount(self.key, time.time(), "+inf"))

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Wait for a free slot (up to `wait_s`), hold it for the block, then give it back."""
        token = uuid.uuid4().hex
        deadline = time.monotonic() + self.wait_s
        while not self.try_acquire(token):
            if time.monotonic() > deadline:
                raise ServiceUnavailableError("no free LLM slot", key=self.key, limit=self.limit)
            time.sleep(self.poll_s)
        try:
            yield
        finally:
            self.release(token)
