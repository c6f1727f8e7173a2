"""Counting semaphores in Redis with leases: at most N LLM calls of one kind per model, across
every process; a holder that dies frees its slot when its lease runs out.

Leases are short and renewed while held: a thread of the holding process pushes out every lease
it holds each `renew_s`, so a lease nobody renews (its holder died, or Redis came back from a
snapshot taken while the slot was held) is free again `lease_s` after its last renewal, and
`read_leases` can tell a lease whose call is in flight from a stale one. A holder past
`max_hold_s` is no longer renewed, so a slot that is never given back still frees itself.

Two kinds never share slots: background calls (graph and memory extraction, in the workers)
and interactive calls (chat answers, question entities, agent steps, previews, in the API and
the CLI). Each kind has its own bound, so a burst of chats cannot take the workers' slots nor
pile unbounded requests onto the LLM server, and a waiting person gets a clear 503 in time.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NoReturn

import redis
from pydantic import BaseModel

from graphrag.errors import LlmBusyError, ServiceUnavailableError
from graphrag.settings import LlmSettings

__all__ = [
    "LeasePolicy",
    "LeaseSemaphore",
    "SlotLeases",
    "background_limiter",
    "background_policy",
    "background_slots_key",
    "interactive_limiter",
    "interactive_policy",
    "interactive_slots_key",
    "read_leases",
]

log = logging.getLogger(__name__)

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


@dataclass(frozen=True)
class LeasePolicy:
    """How a slot's lease lives: `lease_s` from its last renewal, renewed each `renew_s` while
    held, for at most `max_hold_s`; a lease not renewed for `stale_after_s` is reported stale."""

    lease_s: float
    renew_s: float
    stale_after_s: float
    max_hold_s: float

    def __post_init__(self) -> None:
        if not 0 < self.renew_s < self.stale_after_s <= self.lease_s <= self.max_hold_s:
            raise ValueError(
                "slot leases need 0 < renew_s < stale_after_s <= lease_s <= max_hold_s"
            )


class SlotLeases(BaseModel):
    """The leases of one kind of slot as Redis holds them now."""

    limit: int
    leases: int  # entries in the slot set, expired ones not yet dropped included
    in_flight: int  # renewed within `stale_after_s`: a call is running
    stale: int  # held with no call in flight: no renewal lately (freed when its lease ends)
    stale_holders: list[str]  # "host:pid" of stale leases, at most `limit` of them


def _holder_token() -> str:
    """A lease's member: the holder's host and process, so a stale one can be traced."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def _holder(token: str) -> str:
    return token.rsplit(":", 1)[0]


def read_leases(
    client: redis.Redis[bytes], key: str, limit: int, policy: LeasePolicy
) -> SlotLeases:
    """Count the leases of `key`: those renewed lately (a call in flight) and the stale rest."""
    now = time.time()
    # A lease renewed at t ends at t + lease_s: renewed within stale_after_s <=> ends after this.
    fresh_from = now + policy.lease_s - policy.stale_after_s
    pipe = client.pipeline(transaction=False)
    pipe.zcard(key)
    pipe.zcount(key, f"({fresh_from}", "+inf")
    pipe.zrangebyscore(key, "-inf", fresh_from, start=0, num=limit)
    total, fresh, stale = pipe.execute()
    return SlotLeases(
        limit=limit,
        leases=int(total),
        in_flight=int(fresh),
        stale=int(total) - int(fresh),
        stale_holders=[_holder(t.decode()) for t in stale],
    )


class LeaseSemaphore:
    """`with semaphore.slot(): ...` holds one of `limit` slots named by `key`.

    The threads of one process that wait take turns: one asks Redis every `poll_s` (a slot
    freed by another process) and is woken at once when a thread of this process gives one
    back; the others wait for their turn without asking, so many waiting threads do not poll
    Redis many times over. While any slot is held, one renewer thread pushes out the leases of
    this semaphore in one round trip each `policy.renew_s`; it ends when none is held.
    """

    def __init__(
        self,
        client: redis.Redis[bytes],
        key: str,
        limit: int,
        policy: LeasePolicy,
        wait_s: float,
        poll_s: float = _POLL_S,
        interactive: bool = False,
    ) -> None:
        self.client = client
        self.key = key
        self.limit = limit
        self.policy = policy
        self.wait_s = wait_s
        self.poll_s = poll_s
        self.interactive = interactive
        self._acquire = client.register_script(_ACQUIRE)
        self._turn = threading.Lock()
        self._freed = threading.Condition()
        self._releases = 0  # counts local releases, so a release between two asks is not missed
        # Leases this process holds (token -> monotonic time taken). Renewals and releases of
        # Redis entries both happen under this lock, so a renewal never re-adds a released lease.
        self._held: dict[str, float] = {}
        self._held_lock = threading.Lock()
        self._renewer: threading.Thread | None = None

    def try_acquire(self, token: str) -> bool:
        now = time.time()
        return bool(
            self._acquire(keys=[self.key], args=[now, now + self.policy.lease_s, self.limit, token])
        )

    def release(self, token: str) -> None:
        """Give the slot back. If Redis cannot be reached the lease, no longer renewed, ends by
        itself within `lease_s`: the call's result is not lost to that."""
        with self._held_lock:
            self._held.pop(token, None)
            try:
                self.client.zrem(self.key, token)
            except redis.RedisError as exc:
                log.warning("LLM slot of %s not given back (%s): its lease ends it", self.key, exc)

    def holders(self) -> int:
        """Slots held now (expired leases not counted)."""
        return int(self.client.zcount(self.key, time.time(), "+inf"))

    def leases(self) -> SlotLeases:
        """The leases of these slots now, in flight and stale (see `read_leases`)."""
        return read_leases(self.client, self.key, self.limit, self.policy)

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
        """Wait for a free slot (up to `wait_s`), hold it for the block (its lease renewed
        meanwhile), then give it back."""
        token = _holder_token()
        deadline = time.monotonic() + self.wait_s
        if not self._turn.acquire(timeout=self.wait_s):
            self._busy()
        try:
            self._wait_for_slot(token, deadline)
        finally:
            self._turn.release()
        self._hold(token)
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

    def _hold(self, token: str) -> None:
        """Count `token` among the leases to renew; start the renewer if none runs (a renewer
        recorded but not alive is one of the parent's, seen from a forked child)."""
        with self._held_lock:
            self._held[token] = time.monotonic()
            if self._renewer is None or not self._renewer.is_alive():
                self._renewer = threading.Thread(
                    target=self._renew_loop, name=f"slot-renewer:{self.key}", daemon=True
                )
                self._renewer.start()

    def _renew_loop(self) -> None:
        while True:
            time.sleep(self.policy.renew_s)
            with self._held_lock:
                if not self._held:
                    self._renewer = None  # the next held slot starts a new one
                    return
                self._renew_held()

    def _renew_held(self) -> None:
        """Push out every held lease younger than `max_hold_s` (caller holds `_held_lock`); an
        older one is dropped from the renewals, once, and ends `lease_s` later.

        A plain ZADD, not ZADD XX: after Redis restarted empty (or from a snapshot without
        them) the leases of the calls still running are counted again, so the limit holds.
        """
        now = time.monotonic()
        overdue = [t for t, taken in self._held.items() if now - taken >= self.policy.max_hold_s]
        for token in overdue:
            del self._held[token]
            log.warning(
                "LLM slot %s of %s held past %.0f s: no longer renewed",
                token,
                self.key,
                self.policy.max_hold_s,
            )
        if not self._held:
            return
        ends = time.time() + self.policy.lease_s
        try:
            self.client.zadd(self.key, dict.fromkeys(self._held, ends))
        except redis.RedisError as exc:
            # Redis is away: the next renewal (or the lease's end) settles it.
            log.warning("LLM slot leases of %s not renewed: %s", self.key, exc)


def _lease_policy(settings: LlmSettings, max_hold_s: float) -> LeasePolicy:
    """Leases of `llm.slot_*`, held at most `max_hold_s` (each kind of call has its own)."""
    return LeasePolicy(
        settings.slot_lease_s, settings.slot_renew_s, settings.slot_stale_after_s, max_hold_s
    )


def background_slots_key(settings: LlmSettings) -> str:
    """The Redis key of the background calls' slots of the configured model."""
    return f"graphrag:llm-slots:{settings.model}"


def background_policy(settings: LlmSettings) -> LeasePolicy:
    """The leases of the background slots (`llm.slot_*`, `llm.concurrency_max_hold_s`)."""
    return _lease_policy(settings, settings.concurrency_max_hold_s)


def background_limiter(
    client: redis.Redis[bytes], settings: LlmSettings, limit: int
) -> LeaseSemaphore:
    """The semaphore every background LLM call of this model takes, in every worker process;
    `limit` is the slot count (`server_info.slot_limit`)."""
    return LeaseSemaphore(
        client,
        background_slots_key(settings),
        limit,
        background_policy(settings),
        settings.concurrency_wait_s,
        settings.concurrency_poll_s,
    )


def interactive_slots_key(settings: LlmSettings) -> str:
    """The Redis key of the interactive calls' slots of the configured model."""
    return f"graphrag:llm-interactive:{settings.model}"


def interactive_policy(settings: LlmSettings) -> LeasePolicy:
    """The leases of the interactive slots (`llm.slot_*`, `llm.interactive_max_hold_s`)."""
    return _lease_policy(settings, settings.interactive_max_hold_s)


def interactive_limiter(client: redis.Redis[bytes], settings: LlmSettings) -> LeaseSemaphore:
    """The semaphore every interactive LLM call of this model takes, in every process."""
    return LeaseSemaphore(
        client,
        interactive_slots_key(settings),
        settings.interactive_limit,
        interactive_policy(settings),
        settings.interactive_wait_s,
        settings.concurrency_poll_s,
        interactive=True,
    )
