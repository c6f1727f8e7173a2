"""Counting semaphores in Redis with leases: at most N LLM calls of one kind per model, across
every process; a holder that dies frees its slot when its lease runs out.

Two kinds never share slots: background calls (graph and memory extraction, in the workers)
and interactive calls (chat answers, question entities, agent steps, previews, in the API and
the CLI). Each kind has its own bound, so a burst of chats cannot take the workers' slots nor
pile unbounded requests onto the LLM server, and a waiting person gets a clear 503 in time.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import redis

from graphrag.errors import LlmBusyError, ServiceUnavailableError
from graphrag.settings import LlmSettings

__all__ = [
    "LeaseSemaphore",
    "background_limiter",
    "background_slots_key",
    "interactive_limiter",
    "interactive_slots_key",
]

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
    """`with semaphore.slot(): ...` holds one of `limit` slots named by `key`.

    The threads of one process that wait take turns: one asks Redis every `poll_s` (a slot
    freed by another process) and is woken at once when a thread of this process gives one
    back; the others wait for their turn without asking, so many waiting threads do not poll
    Redis many times over.
    """

    def __init__(
        self,
        client: redis.Redis[bytes],
        key: str,
        limit: int,
        lease_s: int,
        wait_s: float,
        poll_s: float = _POLL_S,
        interactive: bool = False,
    ) -> None:
        self.client = client
        self.key = key
        self.limit = limit
        self.lease_s = lease_s
        self.wait_s = wait_s
        self.poll_s = poll_s
        self.interactive = interactive
        self._acquire = client.register_script(_ACQUIRE)
        self._turn = threading.Lock()
        self._freed = threading.Condition()
        self._releases = 0  # counts local releases, so a release between two asks is not missed

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

    def _busy(self) -> NoReturn:
        if self.interactive:
            # A person is waiting: a stable code, and when to try again.
            raise LlmBusyError(
                "every interactive LLM slot is busy; try again shortly",
                retry_after_s=max(1, math.ceil(self.wait_s)),
                limit=self.limit,
            )
        raise ServiceUnavailableError("no free LLM slot", key=self.key, limit=self.limit)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Wait for a free slot (up to `wait_s`), hold it for the block, then give it back."""
        token = uuid.uuid4().hex
        deadline = time.monotonic() + self.wait_s
        if not self._turn.acquire(timeout=self.wait_s):
            self._busy()
        try:
            self._wait_for_slot(token, deadline)
        finally:
            self._turn.release()
        try:
            yield
        finally:
            self.release(token)
            with self._freed:
                self._releases += 1
                self._freed.notify()

    def _wait_for_slot(self, token: str, deadline: float) -> None:
        while True:
            with self._freed:
                seen = self._releases
            if self.try_acquire(token):
                return
            if time.monotonic() > deadline:
                self._busy()
            with self._freed:
                if self._releases == seen:
                    self._freed.wait(self.poll_s)


def background_slots_key(settings: LlmSettings) -> str:
    """The Redis key of the background calls' slots of the configured model."""
    return f"graphrag:llm-slots:{settings.model}"


def background_limiter(
    client: redis.Redis[bytes], settings: LlmSettings, limit: int
) -> LeaseSemaphore:
    """The semaphore every background LLM call of this model takes, in every worker process;
    `limit` is the slot count (`server_info.slot_limit`)."""
    return LeaseSemaphore(
        client,
        background_slots_key(settings),
        limit,
        settings.concurrency_lease_s,
        settings.concurrency_wait_s,
        settings.concurrency_poll_s,
    )


def interactive_slots_key(settings: LlmSettings) -> str:
    """The Redis key of the interactive calls' slots of the configured model."""
    return f"graphrag:llm-interactive:{settings.model}"


def interactive_limiter(client: redis.Redis[bytes], settings: LlmSettings) -> LeaseSemaphore:
    """The semaphore every interactive LLM call of this model takes, in every process."""
    return LeaseSemaphore(
        client,
        interactive_slots_key(settings),
        settings.interactive_limit,
        settings.interactive_lease_s,
        settings.interactive_wait_s,
        settings.concurrency_poll_s,
        interactive=True,
    )
